/** The message list of the current narrow: fetched in pages with GET /messages (opening on the first
 * unread message), extended by `message` events when the narrow allows, never holding one message
 * twice (a re-register or an event racing a fetch may deliver it again). */
import * as api from "../api.js";
import { apiNarrow, messageMatches } from "../narrow.js";
import { store, changed } from "./index.js";

const PAGE = 50;
let generation = 0;

function newView(narrow) {
  return {
    narrow,
    messages: [],
    byId: new Map(),
    foundOldest: false,
    foundNewest: false,
    loadingOlder: false,
    loadingNewer: false,
    loading: true,
    anchorId: null,
    error: null,
  };
}

/** Inserts messages, keeping id order and dropping ones already there. */
function merge(view, messages) {
  let added = false;
  for (const m of messages) {
    const old = view.byId.get(m.id);
    if (old) {
      Object.assign(old, m);
      continue;
    }
    view.byId.set(m.id, m);
    added = true;
  }
  if (added) view.messages = [...view.byId.values()].sort((a, b) => a.id - b.id);
}

const fetchParams = (narrow, extra) => ({
  narrow: apiNarrow(narrow),
  apply_markdown: true,
  client_gravatar: false,
  ...extra,
});

/** Opens a narrow: first unread (or newest) message and the pages around it. */
export async function openNarrow(narrow) {
  const gen = ++generation;
  const beforeRegister = !store.ready;
  store.view = newView(narrow);
  changed();
  try {
    const answer = await api.get("/messages", fetchParams(narrow, { anchor: "first_unread", num_before: PAGE, num_after: PAGE }));
    if (gen !== generation) return;
    const view = store.view;
    merge(view, answer.messages);
    view.foundOldest = answer.found_oldest;
    view.foundNewest = answer.found_newest;
    view.anchorId = answer.anchor;
    view.loading = false;
    // fetched before the event queue existed: what arrived in between is fetched now
    if (beforeRegister && store.ready) queueMicrotask(catchUp);
  } catch (error) {
    if (gen !== generation) return;
    store.view.loading = false;
    store.view.error = error.message;
  }
  changed();
}

/** Fetches the page before the oldest message shown (scroll to the top). */
export async function loadOlder() {
  const view = store.view;
  if (!view || view.loading || view.loadingOlder || view.foundOldest || !view.messages.length) return;
  view.loadingOlder = true;
  changed();
  try {
    const answer = await api.get("/messages", fetchParams(view.narrow, {
      anchor: view.messages[0].id, num_before: PAGE, num_after: 0, include_anchor: false,
    }));
    if (store.view !== view) return;
    merge(view, answer.messages);
    view.foundOldest = answer.found_oldest;
  } catch (error) {
    view.error = error.message;
  } finally {
    view.loadingOlder = false;
    changed();
  }
}

/** Fetches the page after the newest message shown (scroll to the bottom of a long unread run). */
export async function loadNewer() {
  const view = store.view;
  if (!view || view.loading || view.loadingNewer || view.foundNewest || !view.messages.length) return;
  view.loadingNewer = true;
  try {
    const answer = await api.get("/messages", fetchParams(view.narrow, {
      anchor: view.messages[view.messages.length - 1].id, num_before: 0, num_after: PAGE, include_anchor: false,
    }));
    if (store.view !== view) return;
    merge(view, answer.messages);
    view.foundNewest = answer.found_newest;
  } catch (error) {
    view.error = error.message;
  } finally {
    view.loadingNewer = false;
    changed();
  }
}

/** After a re-register the events in between are lost: fetch what is newer than what is shown. */
export async function catchUp() {
  const view = store.view;
  if (!view || view.loading) return;
  if (!view.messages.length) return openNarrow(view.narrow);
  try {
    const answer = await api.get("/messages", fetchParams(view.narrow, {
      anchor: view.messages[view.messages.length - 1].id, num_before: 0, num_after: PAGE * 2, include_anchor: true,
    }));
    if (store.view !== view) return;
    merge(view, answer.messages);
    view.foundNewest = answer.found_newest;
    changed();
  } catch {
    // the next event or scroll tries again
  }
}

/** A message event: shown when it matches the narrow and the list reaches the present. */
export function addLiveMessage(message) {
  const view = store.view;
  if (!view || view.loading || !view.foundNewest) return;
  if (messageMatches(view.narrow, message, store.me.user_id) !== true) return;
  merge(view, [message]);
  changed();
}

export function findMessage(id) {
  return store.view ? store.view.byId.get(id) : undefined;
}

export function removeMessages(ids) {
  const view = store.view;
  if (!view) return;
  let removed = false;
  for (const id of ids) removed = view.byId.delete(id) || removed;
  if (removed) view.messages = view.messages.filter((m) => view.byId.has(m.id));
}
