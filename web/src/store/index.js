/** The client's one store: what POST /register returned, kept current by events, plus the message
 * list of the current narrow. Views read it directly and re-render when `changed()` is called;
 * changes in one task are coalesced into one render. */
import { Unreads } from "./unread.js";

const listeners = new Set();
let scheduled = false;

export const store = {
  ready: false,
  me: null,
  realm: {},
  settings: {},
  users: new Map(),
  streams: new Map(),
  subs: new Map(),
  unreads: new Unreads(),
  presence: new Map(),
  /** dm or "stream_id\ntopic" key -> Map(user_id -> expiry ms) */
  typing: new Map(),
  drafts: new Map(),
  realmEmoji: {},
  /** stream_id -> [{name, max_id}] newest first, fetched lazily */
  topics: new Map(),
  /** the current narrow's messages, oldest first */
  view: null,
  connection: "connecting",
  emojiNames: null,

  streamByName(name) {
    const lower = String(name).toLowerCase();
    for (const s of this.streams.values()) if (s.name.toLowerCase() === lower) return s;
    return null;
  },
  userByText(text) {
    const lower = String(text).toLowerCase();
    if (/^\d+$/.test(lower)) return this.users.get(Number(lower)) || null;
    for (const u of this.users.values())
      if (u.email.toLowerCase() === lower || u.full_name.toLowerCase() === lower) return u;
    return null;
  },
  isAdmin() {
    return this.me && (this.me.role === 100 || this.me.role === 200 || this.me.is_admin);
  },
};

/** Asks for a re-render once the current task is done. */
export function changed() {
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(() => {
    scheduled = false;
    for (const fn of listeners) fn();
  });
}

export function subscribe(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Replaces everything from a (re-)register answer. */
export function loadRegister(state, myId) {
  store.me = null;
  store.users = new Map();
  for (const u of [...(state.realm_users || []), ...(state.cross_realm_bots || [])]) store.users.set(u.user_id, u);
  // deactivated accounts: names for old messages, and the administrator's Reactivate button
  for (const u of state.realm_non_active_users || []) store.users.set(u.user_id, { ...u, is_active: false });
  store.me = store.users.get(state.user_id ?? myId) || { user_id: state.user_id, full_name: state.full_name, email: state.email };
  store.me = { ...store.me, role: state.role ?? store.me.role, is_admin: state.is_admin };
  store.streams = new Map();
  store.subs = new Map();
  for (const s of state.streams || []) store.streams.set(s.stream_id, s);
  for (const s of state.never_subscribed || []) store.streams.set(s.stream_id, s);
  for (const s of state.unsubscribed || []) store.streams.set(s.stream_id, s);
  for (const s of state.subscriptions || []) {
    store.streams.set(s.stream_id, s);
    store.subs.set(s.stream_id, s);
  }
  store.unreads = Unreads.fromRegister(state.unread_msgs || {}, store.me.user_id);
  store.presence = new Map(Object.entries(state.presences || {}).map(([id, p]) => [Number(id), p]));
  store.settings = state.user_settings || {};
  store.realm = {};
  for (const [key, value] of Object.entries(state)) if (key.startsWith("realm_")) store.realm[key.slice(6)] = value;
  store.realmEmoji = state.realm_emoji || {};
  store.drafts = new Map((state.drafts || []).map((d) => [d.id, d]));
  store.recentDms = (state.recent_private_conversations || []).map((c) => ({
    key: c.user_ids.length ? [...c.user_ids].sort((a, b) => a - b).join(",") : String(store.me.user_id),
    max_id: c.max_message_id,
  }));
  store.serverEmojiUrl = state.server_emoji_data_url;
  store.maxFileUploadMib = state.max_file_upload_size_mib;
  store.ready = true;
  changed();
}

/** Adds or refreshes one DM conversation at the top of the recent list. */
export function touchDm(key, messageId) {
  const rest = (store.recentDms || []).filter((c) => c.key !== key);
  const found = (store.recentDms || []).find((c) => c.key === key);
  store.recentDms = [{ key, max_id: Math.max(messageId, found ? found.max_id : 0) }, ...rest];
}
