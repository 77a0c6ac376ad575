/** Unread message ids and where each one lives, so that counts per channel, topic and DM
 * conversation stay right as messages arrive, are read, move or are deleted. Seeded from
 * `unread_msgs` of POST /register (which counts up to 50,000 messages), then kept by events. */
import { dmKey } from "../narrow.js";

export class Unreads {
  constructor() {
    /** id -> {stream_id, topic} | {dm: key} */
    this.where = new Map();
    this.mentions = new Set();
  }

  static fromRegister(unreadMsgs, myId) {
    const u = new Unreads();
    for (const s of unreadMsgs.streams || [])
      for (const id of s.unread_message_ids) u.where.set(id, { stream_id: s.stream_id, topic: s.topic });
    for (const p of unreadMsgs.pms || [])
      for (const id of p.unread_message_ids) u.where.set(id, { dm: dmKey([p.other_user_id ?? p.sender_id], myId) });
    for (const h of unreadMsgs.huddles || [])
      for (const id of h.unread_message_ids) u.where.set(id, { dm: dmKey(h.user_ids_string.split(",").map(Number), myId) });
    for (const id of unreadMsgs.mentions || []) u.mentions.add(id);
    return u;
  }

  /** Records a message that is unread (its flags lack "read"). */
  addMessage(message, myId) {
    if ((message.flags || []).includes("read")) return;
    this.where.set(message.id, locationOf(message, myId));
    if ((message.flags || []).some((f) => f === "mentioned" || f === "wildcard_mentioned")) this.mentions.add(message.id);
  }

  remove(ids) {
    for (const id of ids) {
      this.where.delete(id);
      this.mentions.delete(id);
    }
  }

  /** Moves unread messages to a new channel/topic (update_message with a move). */
  move(ids, streamId, topic) {
    for (const id of ids) {
      const loc = this.where.get(id);
      if (loc && loc.stream_id !== undefined)
        this.where.set(id, { stream_id: streamId ?? loc.stream_id, topic: topic ?? loc.topic });
    }
  }

  /** Counts per channel, per topic ("id\ntopic") and per DM key, in one pass. */
  counts() {
    const streams = new Map();
    const topics = new Map();
    const dms = new Map();
    let dmTotal = 0;
    for (const loc of this.where.values()) {
      if (loc.dm !== undefined) {
        dms.set(loc.dm, (dms.get(loc.dm) || 0) + 1);
        dmTotal++;
      } else {
        streams.set(loc.stream_id, (streams.get(loc.stream_id) || 0) + 1);
        const key = loc.stream_id + "\n" + loc.topic.toLowerCase();
        topics.set(key, (topics.get(key) || 0) + 1);
      }
    }
    return { streams, topics, dms, dmTotal, mentions: this.mentions.size, total: this.where.size };
  }

  /** Unread ids in a channel or one of its topics (for "mark as read"). */
  idsIn(streamId, topic) {
    const ids = [];
    for (const [id, loc] of this.where)
      if (loc.stream_id === streamId && (topic === undefined || loc.topic.toLowerCase() === topic.toLowerCase())) ids.push(id);
    return ids;
  }
}

export function locationOf(message, myId) {
  if (message.type === "stream") return { stream_id: message.stream_id, topic: message.subject };
  return { dm: dmKey(message.display_recipient.map((r) => r.id), myId) };
}
