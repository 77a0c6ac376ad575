/** Presentation helpers: times, the server's rendered HTML made displayable without the reference's
 * sprite sheets and fonts (emoji spans get their character; KaTeX shows its MathML; `<time>` is shown
 * in the reader's time zone). */
import { emojiChar } from "./emoji.js";

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const dateFmt = new Intl.DateTimeFormat(undefined, { weekday: "short", month: "short", day: "numeric", year: "numeric" });
const fullFmt = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "medium" });

export const formatTime = (ts) => timeFmt.format(new Date(ts * 1000));
export const formatDate = (ts) => dateFmt.format(new Date(ts * 1000));
export const formatFull = (ts) => fullFmt.format(new Date(ts * 1000));

/** Rendered message HTML as shown: `<span class="emoji emoji-1f642">:smile:</span>` shows 🙂. */
export function displayHtml(content) {
  return content
    .replace(/(<time datetime="([^"]+)"[^>]*>)[^<]*(<\/time>)/g, (whole, open, iso, close) => {
      const date = new Date(iso);
      return isNaN(date) ? whole : open + fullFmt.format(date) + close;
    })
    .replace(
    /(<span[^>]*class="emoji emoji-([0-9a-f-]+)"[^>]*>)[^<]*(<\/span>)/g,
    (_, open, code, close) => open + emojiChar(code) + close,
  );
}

export function initials(name) {
  return (name || "?").split(/\s+/).map((w) => w[0]).join("").slice(0, 2).toUpperCase();
}
