/** Narrows: the list of search terms that selects messages (`[{operator, operand, negated}]`), and
 * their two spellings — the address-bar hash (`#narrow/channel/12-general/topic/lunch`, encoded as
 * the reference web app does, so its links are bookmarkable and interchangeable) and the search box
 * (`channel:general topic:"lunch plans" has:image word`). */

const HASH_REPLACEMENTS = { "%": ".", "(": ".28", ")": ".29", ".": ".2E" };

/** The reference's hash component encoding: percent-encoding with "." for "%". */
export function encodeHashComponent(text) {
  return encodeURIComponent(text).replace(/[%().]/g, (c) => HASH_REPLACEMENTS[c]);
}

export function decodeHashComponent(text) {
  try {
    return decodeURIComponent(text.replace(/\./g, "%"));
  } catch {
    return text;
  }
}

const slug = (name) => name.replace(/[ ]+/g, "-");

/** The hash for a narrow; channel and DM operands carry ids (names may change). */
export function narrowToHash(narrow, store) {
  if (!narrow || narrow.length === 0) return "#feed";
  const parts = ["narrow"];
  for (const term of narrow) {
    const op = (term.negated ? "-" : "") + term.operator;
    let operand = term.operand;
    if (term.operator === "channel") {
      const stream = store && store.streams.get(Number(operand));
      operand = stream ? `${stream.stream_id}-${slug(stream.name)}` : String(operand);
    } else if (term.operator === "dm") {
      const ids = Array.isArray(operand) ? operand : [operand];
      operand = ids.join(",") + (ids.length > 1 ? "-group" : "-dm");
    } else if (term.operator === "sender" && typeof operand === "number") {
      operand = String(operand);
    }
    parts.push(encodeHashComponent(op), encodeHashComponent(String(operand)));
  }
  return "#" + parts.join("/");
}

const OPERATOR_ALIASES = { stream: "channel", "pm-with": "dm", "dm-including": "dm-including" };

/** The narrow of a hash, or null when the hash is not a narrow (settings pages, the feed). */
export function hashToNarrow(hash) {
  const parts = hash.replace(/^#/, "").split("/");
  if (parts[0] !== "narrow") return null;
  const narrow = [];
  for (let i = 1; i + 1 < parts.length; i += 2) {
    let op = decodeHashComponent(parts[i]);
    const negated = op.startsWith("-");
    if (negated) op = op.slice(1);
    op = OPERATOR_ALIASES[op] || op;
    let operand = decodeHashComponent(parts[i + 1]);
    if (op === "channel") {
      const match = /^(\d+)(-|$)/.exec(operand);
      if (match) operand = Number(match[1]);
    } else if (op === "dm") {
      const match = /^([\d,]+)(-|$)/.exec(operand);
      operand = match ? match[1].split(",").map(Number) : operand;
    } else if (op === "sender" && /^\d+$/.test(operand)) {
      operand = Number(operand);
    }
    narrow.push({ operator: op, operand, negated });
  }
  return narrow;
}

/** Splits a search string into terms; `op:value`, `op:"quoted value"`, `-op:value`, free words. */
export function parseSearch(text, store) {
  const narrow = [];
  const words = [];
  const re = /(-?)([a-z-]+):(?:"([^"]*)"|(\S+))|"([^"]*)"|(\S+)/gi;
  let m;
  while ((m = re.exec(text))) {
    if (m[2]) {
      const negated = m[1] === "-";
      let operator = m[2].toLowerCase();
      operator = OPERATOR_ALIASES[operator] || operator;
      let operand = m[3] !== undefined ? m[3] : m[4];
      if (operator === "channel" && store) {
        const stream = store.streamByName(operand);
        if (stream) operand = stream.stream_id;
      } else if (operator === "sender" && store) {
        const user = store.userByText(operand);
        if (user) operand = user.user_id;
      } else if (operator === "dm" && store) {
        const ids = operand.split(",").map((t) => store.userByText(t.trim())).filter(Boolean);
        if (ids.length) operand = ids.map((u) => u.user_id);
      }
      narrow.push({ operator, operand, negated });
    } else {
      words.push(m[5] !== undefined ? m[5] : m[6]);
    }
  }
  if (words.length) narrow.push({ operator: "search", operand: words.join(" "), negated: false });
  return narrow;
}

/** The search box's text for a narrow (the inverse of parseSearch). */
export function narrowToSearch(narrow, store) {
  const quote = (t) => (/\s/.test(t) ? `"${t}"` : t);
  return (narrow || [])
    .map((term) => {
      let operand = term.operand;
      if (term.operator === "search") return operand;
      if (term.operator === "channel") operand = store.streams.get(Number(operand))?.name ?? operand;
      if (term.operator === "sender" && typeof operand === "number") operand = store.users.get(operand)?.email ?? operand;
      if (term.operator === "dm" && Array.isArray(operand))
        operand = operand.map((id) => store.users.get(id)?.email ?? id).join(",");
      return `${term.negated ? "-" : ""}${term.operator}:${quote(String(operand))}`;
    })
    .join(" ");
}

/** The narrow in the form the API takes (`narrow=` of GET /messages). */
export function apiNarrow(narrow) {
  return (narrow || []).map(({ operator, operand, negated }) => ({ operator, operand, negated: !!negated }));
}

/** The conversation key of a DM message or a dm operand: the sorted ids of everyone but me (or me
 * alone for a self-DM), joined by commas. */
export function dmKey(ids, myId) {
  const others = [...new Set(ids)].filter((id) => id !== myId).sort((a, b) => a - b);
  return (others.length ? others : [myId]).join(",");
}

/** Whether a new message (from an event) belongs to the narrow, for the narrows the client can
 * decide alone. `null` means "cannot tell" (full-text search, has:): the list is then not extended
 * live, as the reference does for searches. */
export function messageMatches(narrow, message, myId) {
  for (const term of narrow || []) {
    let ok;
    switch (term.operator) {
      case "channel":
        ok = message.type === "stream" && message.stream_id === Number(term.operand);
        break;
      case "topic":
        ok = message.type === "stream" && message.subject.toLowerCase() === String(term.operand).toLowerCase();
        break;
      case "dm": {
        if (message.type !== "private") { ok = false; break; }
        const ids = Array.isArray(term.operand) ? term.operand : [term.operand];
        ok = dmKey(message.display_recipient.map((r) => r.id), myId) === dmKey(ids, myId);
        break;
      }
      case "sender":
        ok = message.sender_id === Number(term.operand) || message.sender_email === term.operand;
        break;
      case "is":
        if (term.operand === "dm" || term.operand === "private") ok = message.type === "private";
        else if (term.operand === "mentioned") ok = (message.flags || []).some((f) => f.includes("mentioned"));
        else if (term.operand === "starred") ok = (message.flags || []).includes("starred");
        else if (term.operand === "unread") ok = !(message.flags || []).includes("read");
        else return null;
        break;
      default:
        return null;
    }
    if (term.negated) ok = !ok;
    if (!ok) return false;
  }
  return true;
}

/** A short human title for a narrow (the page title and the heading). */
export function narrowTitle(narrow, store) {
  if (!narrow || narrow.length === 0) return "Combined feed";
  const channel = narrow.find((t) => t.operator === "channel" && !t.negated);
  const topic = narrow.find((t) => t.operator === "topic" && !t.negated);
  const dm = narrow.find((t) => t.operator === "dm");
  if (narrow.length <= 2 && channel && (narrow.length === 1 || topic)) {
    const name = store.streams.get(Number(channel.operand))?.name ?? channel.operand;
    return topic ? `#${name} > ${topic.operand}` : `#${name}`;
  }
  if (narrow.length === 1 && dm) {
    const ids = Array.isArray(dm.operand) ? dm.operand : [dm.operand];
    return "DM with " + ids.map((id) => store.users.get(id)?.full_name ?? id).join(", ");
  }
  if (narrow.length === 1 && narrow[0].operator === "is") {
    const names = { starred: "Starred messages", mentioned: "Mentions", dm: "Direct messages", unread: "Unread" };
    if (names[narrow[0].operand]) return names[narrow[0].operand];
  }
  return "Search: " + narrowToSearch(narrow, store);
}
