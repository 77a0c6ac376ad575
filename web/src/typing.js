/** Typing notifications, both ways. Sending follows the reference's timing: "start" at once and
 * again every 10 s while keys keep coming, "stop" after 5 s without a key or when the message is
 * sent. Receiving: a typist is shown for 15 s after their last "start" unless "stop" comes first. */
import * as api from "./api.js";
import { store, changed } from "./store/index.js";
import { dmKey } from "./narrow.js";

const RESEND_MS = 10000;
const IDLE_MS = 5000;
const SHOWN_MS = 15000;

let current = null; // {key, params, lastStart, idleTimer}

function paramsFor(target) {
  if (target.type === "stream")
    return { key: `s${target.streamId}\n${target.topic}`, params: { type: "stream", stream_id: target.streamId, topic: target.topic } };
  return { key: "d" + target.userIds.join(","), params: { type: "direct", to: target.userIds } };
}

/** Called on every keystroke in the compose box with where the message would go. */
export function typed(target) {
  if (!target || (target.type === "stream" && (!target.streamId || !target.topic)) || (target.type === "dm" && !target.userIds.length))
    return;
  const { key, params } = paramsFor(target);
  if (current && current.key !== key) stopped();
  const now = Date.now();
  if (!current) current = { key, params, lastStart: 0 };
  if (now - current.lastStart > RESEND_MS) {
    current.lastStart = now;
    api.post("/typing", { ...params, op: "start" }).catch(() => {});
  }
  clearTimeout(current.idleTimer);
  current.idleTimer = setTimeout(stopped, IDLE_MS);
}

/** The user sent, cleared or left the compose box. */
export function stopped() {
  if (!current) return;
  clearTimeout(current.idleTimer);
  api.post("/typing", { ...current.params, op: "stop" }).catch(() => {});
  current = null;
}

/** A typing event from the server. */
export function noteTyping(event) {
  const me = store.me.user_id;
  const senderId = event.sender.user_id;
  if (senderId === me) return;
  const key =
    event.message_type === "stream"
      ? event.stream_id + "\n" + event.topic
      : dmKey([...event.recipients.map((r) => r.user_id), senderId], me);
  if (!store.typing.has(key)) store.typing.set(key, new Map());
  const typists = store.typing.get(key);
  if (event.op === "start") typists.set(senderId, Date.now() + SHOWN_MS);
  else typists.delete(senderId);
  setTimeout(changed, SHOWN_MS + 100);
}

/** Names of the people typing in a conversation (key as in store.typing). */
export function typistsIn(key) {
  const typists = store.typing.get(key);
  if (!typists) return [];
  const now = Date.now();
  return [...typists].filter(([, until]) => until > now).map(([id]) => store.users.get(id)?.full_name ?? "Someone");
}
