/** Applies server events to the store. Each handler is idempotent where the server might repeat
 * itself (a message already shown, a flag already set), so a retried poll never shows anything twice. */
import { store, changed, touchDm } from "./index.js";
import { locationOf } from "./unread.js";
import { addLiveMessage, findMessage, removeMessages } from "./messages.js";
import { dmKey, messageMatches, narrowToHash } from "../narrow.js";
import { route } from "../router.js";
import { noteTyping } from "../typing.js";

function onMessage(event) {
  const message = { ...event.message, flags: event.flags || [] };
  const me = store.me.user_id;
  if (message.sender_id === me && !message.flags.includes("read")) message.flags.push("read");
  store.unreads.addMessage(message, me);
  if (message.type === "private") touchDm(locationOf(message, me).dm, message.id);
  else {
    const topics = store.topics.get(message.stream_id);
    if (topics) {
      const rest = topics.filter((t) => t.name.toLowerCase() !== message.subject.toLowerCase());
      store.topics.set(message.stream_id, [{ name: message.subject, max_id: message.id }, ...rest]);
    }
  }
  // the sender stopped typing once the message is there
  const key = message.type === "private" ? locationOf(message, me).dm : message.stream_id + "\n" + message.subject;
  store.typing.get(key)?.delete(message.sender_id);
  addLiveMessage(message);
  window.dispatchEvent(new CustomEvent("parley:message", { detail: message }));
}

function onUpdateMessage(event) {
  const ids = event.message_ids || [event.message_id];
  if (event.rendered_content !== undefined) {
    const m = findMessage(event.message_id);
    if (m) {
      m.content = event.rendered_content;
      if (!event.rendering_only) m.last_edit_timestamp = event.edit_timestamp;
    }
  }
  const moved = event.new_stream_id !== undefined || event.subject !== undefined;
  if (moved) {
    const newStream = event.new_stream_id ?? event.stream_id;
    store.unreads.move(ids, newStream, event.subject);
    for (const id of ids) {
      const m = findMessage(id);
      if (!m) continue;
      if (event.subject !== undefined) m.subject = event.subject;
      if (event.new_stream_id !== undefined) {
        m.stream_id = event.new_stream_id;
        m.display_recipient = store.streams.get(event.new_stream_id)?.name ?? m.display_recipient;
      }
      m.last_moved_timestamp = event.edit_timestamp;
    }
    store.topics.delete(event.stream_id);
    if (newStream !== event.stream_id) store.topics.delete(newStream);
    afterMove(event, ids);
  }
  if (event.topic_links !== undefined) {
    const m = findMessage(event.message_id);
    if (m) m.topic_links = event.topic_links;
  }
}

/** A whole topic moved (or resolved) while it is on screen takes the view along, as the reference
 * does, so the reader stays with the conversation (the address bar follows without a new entry in
 * the history); other messages that no longer match the narrow leave it. */
function afterMove(event, ids) {
  const view = store.view;
  if (!view) return;
  const channel = view.narrow.find((t) => t.operator === "channel" && !t.negated);
  const topic = view.narrow.find((t) => t.operator === "topic" && !t.negated);
  const wholeTopicHere =
    event.propagate_mode === "change_all" && channel && topic && Number(channel.operand) === event.stream_id &&
    String(topic.operand).toLowerCase() === String(event.orig_subject ?? "").toLowerCase();
  if (wholeTopicHere) {
    const narrow = view.narrow.map((t) =>
      t === channel ? { ...t, operand: event.new_stream_id ?? event.stream_id } : t === topic ? { ...t, operand: event.subject ?? t.operand } : t,
    );
    view.narrow = narrow;
    if (route.kind === "narrow") {
      route.narrow = narrow;
      history.replaceState(history.state, "", narrowToHash(narrow, store));
    }
    return;
  }
  const me = store.me.user_id;
  removeMessages(ids.filter((id) => {
    const m = findMessage(id);
    return m && messageMatches(view.narrow, m, me) === false;
  }));
}

function onFlags(event) {
  const add = event.op === "add";
  const ids = event.all ? [...store.unreads.where.keys()] : event.messages;
  if (event.flag === "read") {
    if (add) store.unreads.remove(ids);
    else
      for (const id of ids) {
        const detail = event.message_details?.[id];
        if (detail?.type === "stream") store.unreads.where.set(id, { stream_id: detail.stream_id, topic: detail.topic });
        else if (detail) store.unreads.where.set(id, { dm: dmKey([...(detail.user_ids || [])], store.me.user_id) });
        if (detail?.mentioned) store.unreads.mentions.add(id);
      }
  }
  for (const id of ids) {
    const m = findMessage(id);
    if (!m) continue;
    const flags = new Set(m.flags || []);
    if (add) flags.add(event.flag);
    else flags.delete(event.flag);
    m.flags = [...flags];
  }
}

function onReaction(event) {
  const m = findMessage(event.message_id);
  if (!m) return;
  const same = (r) => r.user_id === event.user_id && r.emoji_code === event.emoji_code && r.reaction_type === event.reaction_type;
  const rest = (m.reactions || []).filter((r) => !same(r));
  if (event.op === "add")
    rest.push({ emoji_name: event.emoji_name, emoji_code: event.emoji_code, reaction_type: event.reaction_type, user_id: event.user_id });
  m.reactions = rest;
}

function onSubscription(event) {
  if (event.op === "add") {
    for (const s of event.subscriptions) {
      store.subs.set(s.stream_id, s);
      store.streams.set(s.stream_id, s);
    }
  } else if (event.op === "remove") {
    for (const s of event.subscriptions) store.subs.delete(s.stream_id);
  } else if (event.op === "update") {
    const sub = store.subs.get(event.stream_id);
    if (sub) sub[event.property] = event.value;
  }
}

function onStream(event) {
  if (event.op === "create") {
    for (const s of event.streams) if (!store.streams.has(s.stream_id)) store.streams.set(s.stream_id, s);
  } else if (event.op === "delete") {
    for (const s of event.streams) {
      store.streams.delete(s.stream_id);
      store.subs.delete(s.stream_id);
    }
  } else if (event.op === "update") {
    for (const obj of [store.streams.get(event.stream_id), store.subs.get(event.stream_id)])
      if (obj) obj[event.property] = event.value;
  }
}

function onRealmUser(event) {
  const person = event.person;
  if (event.op === "add") store.users.set(person.user_id, person);
  else if (event.op === "remove") store.users.delete(person.user_id);
  else if (event.op === "update") {
    const u = store.users.get(person.user_id);
    if (u) Object.assign(u, person);
    if (person.user_id === store.me.user_id) Object.assign(store.me, person);
  }
}

const HANDLERS = {
  message: onMessage,
  update_message: onUpdateMessage,
  delete_message(event) {
    const ids = event.message_ids || [event.message_id];
    store.unreads.remove(ids);
    removeMessages(ids);
  },
  update_message_flags: onFlags,
  reaction: onReaction,
  subscription: onSubscription,
  stream: onStream,
  realm_user: onRealmUser,
  presence(event) {
    if (event.presences) {
      for (const [id, p] of Object.entries(event.presences)) store.presence.set(Number(id), p);
      return;
    }
    const old = store.presence.get(event.user_id) || {};
    const p = event.presence ? Object.values(event.presence)[0] || {} : {};
    const active = Math.max(old.active_timestamp || 0, p.status === "active" ? p.timestamp : 0);
    const idle = Math.max(old.idle_timestamp || 0, p.timestamp || 0);
    store.presence.set(event.user_id, { active_timestamp: active, idle_timestamp: idle });
  },
  typing: noteTyping,
  user_settings(event) {
    if (event.op === "update") store.settings[event.property] = event.value;
  },
  update_display_settings(event) {
    store.settings[event.setting_name] = event.setting;
  },
  realm(event) {
    if (event.op === "update") store.realm[event.property] = event.value;
    else if (event.op === "update_dict") Object.assign(store.realm, event.data);
  },
  realm_emoji(event) {
    store.realmEmoji = event.realm_emoji;
  },
  drafts(event) {
    if (event.op === "add") {
      for (const d of event.drafts) store.drafts.set(d.id, d);
    } else if (event.op === "update") store.drafts.set(event.draft.id, event.draft);
    else if (event.op === "remove") store.drafts.delete(event.draft_id);
  },
};

export function applyEvents(events) {
  for (const event of events) {
    const handler = HANDLERS[event.type];
    if (handler) {
      try {
        handler(event);
      } catch (error) {
        console.error("event", event, error);
      }
    }
  }
  changed();
}
