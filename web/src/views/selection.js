/** The selected message of the message list, and what the keyboard does with it: move it, reply
 * to it. The list, each message and the app's key bindings share it. */
import { store, changed } from "../store/index.js";
import { openCompose } from "../store/compose.js";

export const selection = { id: null };

/** Moves the selection (arrow keys); Infinity goes to the newest. */
export function moveSelection(delta) {
  const list = store.view?.messages || [];
  if (!list.length) return;
  let index = list.findIndex((m) => m.id === selection.id);
  if (delta === Infinity || index < 0) index = list.length - 1;
  else index = Math.max(0, Math.min(list.length - 1, index + delta));
  selection.id = list[index].id;
  changed();
  queueMicrotask(() => {
    const el = document.querySelector(`.message[data-id="${selection.id}"]`);
    el?.scrollIntoView({ block: "nearest" });
    el?.focus({ preventScroll: true });
  });
}

/** Opens the compose box on the selected message's conversation (`r`). */
export function replyToSelected(message) {
  const list = store.view?.messages || [];
  const m = message || list.find((x) => x.id === selection.id) || list[list.length - 1];
  if (!m) return openCompose({});
  if (m.type === "stream") openCompose({ type: "stream", streamId: m.stream_id, topic: m.subject });
  else {
    const me = store.me.user_id;
    const ids = m.display_recipient.map((r) => r.id).filter((id) => id !== me);
    openCompose({ type: "dm", userIds: ids.length ? ids : [me] });
  }
}
