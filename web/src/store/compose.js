/** The compose box's state and the actions on it: where the message goes, its text, and its draft,
 * which lives on the server (/drafts) so it survives a reload or another device. */
import * as api from "../api.js";
import { store, changed } from "./index.js";
import { stopped as typingStopped } from "../typing.js";

export const compose = {
  open: false,
  type: "stream",
  streamId: null,
  topic: "",
  userIds: [],
  content: "",
  draftId: null,
  sending: false,
  error: null,
  focus: null, // "topic" | "content" | "to": the field to focus after opening
};

/** Opens the box for a channel topic or a DM conversation; keeps text typed for the same target. */
export function openCompose(target = {}) {
  const sameTarget =
    compose.open && target.type === compose.type &&
    (target.type === "dm" ? String(target.userIds) === String(compose.userIds) : target.streamId === compose.streamId && target.topic === compose.topic);
  Object.assign(compose, {
    open: true,
    type: target.type || "stream",
    streamId: target.streamId ?? compose.streamId ?? [...store.subs.keys()][0] ?? null,
    topic: target.topic ?? "",
    userIds: target.userIds ?? [],
    error: null,
    focus: target.focus || "content",
  });
  if (!sameTarget && target.keepContent !== true) {
    compose.content = "";
    compose.draftId = null;
  }
  changed();
}

export function closeCompose() {
  compose.open = false;
  typingStopped();
  changed();
}

/** The typing/drafts target of the box as it is now. */
export function composeTarget() {
  return compose.type === "stream"
    ? { type: "stream", streamId: compose.streamId, topic: compose.topic }
    : { type: "dm", userIds: compose.userIds };
}

let draftTimer = null;
/** Messages sent from the box so far: a draft whose creation was still on its way when the message
 * went is stale, and is deleted as soon as its id is known (else it would stay on the server). */
let sends = 0;

/** Saves the text as a draft a second after the last key (POST /drafts, then PATCH it). */
export function scheduleDraft() {
  clearTimeout(draftTimer);
  draftTimer = setTimeout(saveDraft, 1000);
}

export async function saveDraft() {
  clearTimeout(draftTimer);
  if (!compose.content.trim()) return;
  const draft = {
    type: compose.type === "stream" ? "stream" : "private",
    to: compose.type === "stream" ? (compose.streamId ? [compose.streamId] : []) : compose.userIds,
    topic: compose.type === "stream" ? compose.topic : "",
    content: compose.content,
    timestamp: Math.floor(Date.now() / 1000),
  };
  const sendsBefore = sends;
  try {
    if (compose.draftId) await api.patch(`/drafts/${compose.draftId}`, { draft });
    else {
      const answer = await api.post("/drafts", { drafts: [draft] });
      if (sends !== sendsBefore) deleteDraft(answer.ids[0]);
      else compose.draftId = answer.ids[0];
      changed();
    }
  } catch {
    // drafts are a convenience; the text is still in the box
  }
}

async function deleteDraft(id) {
  if (!id) return;
  store.drafts.delete(id);
  try {
    await api.del(`/drafts/${id}`);
  } catch {
    // already gone
  }
}

/** Restores a server draft into the box. */
export function restoreDraft(draft) {
  const isStream = draft.type === "stream";
  openCompose({
    type: isStream ? "stream" : "dm",
    streamId: isStream ? draft.to[0] : undefined,
    topic: draft.topic,
    userIds: isStream ? [] : draft.to,
  });
  compose.content = draft.content;
  compose.draftId = draft.id;
  changed();
}

/** Sends the message (POST /messages); on success the box empties and the draft goes. */
export async function sendMessage() {
  if (compose.sending || !compose.content.trim()) return;
  const params = { content: compose.content };
  if (compose.type === "stream") {
    if (!compose.streamId) return fail("Choose a channel.");
    Object.assign(params, { type: "stream", to: compose.streamId, topic: compose.topic });
  } else {
    if (!compose.userIds.length) return fail("Choose who to send to.");
    Object.assign(params, { type: "direct", to: compose.userIds });
  }
  compose.sending = true;
  compose.error = null;
  changed();
  clearTimeout(draftTimer);
  try {
    await api.post("/messages", params);
    sends++;
    typingStopped();
    const draftId = compose.draftId;
    compose.content = "";
    compose.draftId = null;
    deleteDraft(draftId);
  } catch (error) {
    compose.error = error.message;
  } finally {
    compose.sending = false;
    changed();
  }
}

function fail(message) {
  compose.error = message;
  changed();
}
