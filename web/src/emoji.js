/** Emoji names and codes for the picker and the `:` typeahead. The table comes from the server at run
 * time (`server_emoji_data_url` of POST /register: `{"code_to_names": {...}}`), so the bundle does not
 * carry it; the organization's custom emoji come from `realm_emoji`. */
import { store, changed } from "./store/index.js";

let loading = null;

/** Loads the table once; `store.emojiNames` becomes [{name, code, type}] sorted by name. */
export function loadEmoji() {
  if (loading) return loading;
  // the path only: the page is on this server, whose configured external URL may differ from the
  // address the browser used (a proxy, 127.0.0.1 against localhost)
  let url = "/static/generated/emoji/emoji_api.json";
  try {
    if (store.serverEmojiUrl) url = new URL(store.serverEmojiUrl, location.href).pathname;
  } catch {
    // keep the default
  }
  loading = fetch(url, { credentials: "same-origin" })
    .then((r) => r.json())
    .then((data) => {
      const list = [];
      for (const [code, names] of Object.entries(data.code_to_names || {}))
        for (const name of names) list.push({ name, code, type: "unicode_emoji" });
      list.sort((a, b) => a.name.localeCompare(b.name));
      store.emojiNames = list;
      changed();
    })
    .catch(() => {
      loading = null;
    });
  return loading;
}

/** Custom emoji first, then Unicode names that start with, then contain, the query. */
export function searchEmoji(query, limit = 40) {
  const q = query.toLowerCase();
  const custom = Object.values(store.realmEmoji || {})
    .filter((e) => !e.deactivated && e.name.includes(q))
    .map((e) => ({ name: e.name, code: String(e.id), type: "realm_emoji", url: e.source_url }));
  const all = store.emojiNames || [];
  const starts = [];
  const contains = [];
  for (const e of all) {
    if (starts.length >= limit) break;
    if (e.name.startsWith(q)) starts.push(e);
    else if (q && contains.length < limit && e.name.includes(q)) contains.push(e);
  }
  return [...custom, ...starts, ...contains].slice(0, limit);
}

/** The character for a Unicode emoji code such as "1f44d" or "1f1fa-1f1f8". */
export function emojiChar(code) {
  try {
    return String.fromCodePoint(...code.split("-").map((c) => parseInt(c, 16)));
  } catch {
    return "?";
  }
}

/** Popular reactions, offered before the table has loaded. */
export const QUICK = [
  { name: "+1", code: "1f44d", type: "unicode_emoji" },
  { name: "tada", code: "1f389", type: "unicode_emoji" },
  { name: "smile", code: "1f642", type: "unicode_emoji" },
  { name: "heart", code: "2764", type: "unicode_emoji" },
  { name: "working_on_it", code: "1f6e0", type: "unicode_emoji" },
  { name: "octopus", code: "1f419", type: "unicode_emoji" },
];
