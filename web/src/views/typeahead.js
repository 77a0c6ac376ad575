/** Typeahead for the compose box: `@` offers people (inserting `@**Full Name**`), `:` offers emoji
 * (inserting `:name:`). It looks only at the word before the cursor. */
import { store } from "../store/index.js";
import { searchEmoji } from "../emoji.js";

/** What to suggest for the text before the cursor, or null. */
export function suggestionsFor(text, cursor) {
  const before = text.slice(0, cursor);
  let m = /(^|\s)@(\*\*)?([^\s@*][^@*\n]{0,30}|)$/.exec(before);
  if (m) {
    const q = m[3].toLowerCase();
    const start = cursor - m[3].length - 1 - (m[2] ? 2 : 0);
    const users = [...store.users.values()]
      .filter((u) => u.is_active !== false && (u.full_name.toLowerCase().includes(q) || u.email.toLowerCase().startsWith(q)))
      .sort((a, b) => Number(!a.full_name.toLowerCase().startsWith(q)) - Number(!b.full_name.toLowerCase().startsWith(q)) || a.full_name.localeCompare(b.full_name))
      .slice(0, 8);
    if (!users.length) return null;
    return { start, items: users.map((u) => ({ key: "u" + u.user_id, label: u.full_name, detail: u.email, insert: `@**${u.full_name}** ` })) };
  }
  m = /(^|\s):([a-z0-9_+-]{2,})$/.exec(before);
  if (m) {
    const items = searchEmoji(m[2], 8);
    if (!items.length) return null;
    return { start: cursor - m[2].length - 1, items: items.map((e) => ({ key: "e" + e.name, label: `:${e.name}:`, emoji: e, insert: `:${e.name}: ` })) };
  }
  return null;
}
