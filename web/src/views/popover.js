/** Floating panels anchored to a button: the emoji picker (reactions and compose). One at a time;
 * Esc or a click elsewhere closes it and gives the focus back to the button that opened it. */
import { html, useEffect, useRef, useState } from "../ui.js";
import { store, changed } from "../store/index.js";
import { searchEmoji, emojiChar, QUICK, loadEmoji } from "../emoji.js";

let popover = null; // {kind, anchor, onPick, id}
let opened = 0;

export function openEmojiPicker(anchor, onPick) {
  loadEmoji();
  popover = { kind: "emoji", anchor, onPick, id: ++opened };
  changed();
}

/** Closes the open popover; true when there was one. */
export function closeAllPopovers() {
  if (!popover) return false;
  const anchor = popover.anchor;
  popover = null;
  changed();
  anchor?.focus?.();
  return true;
}

export function EmojiGlyph({ emoji }) {
  if (emoji.type === "realm_emoji" || emoji.reaction_type === "realm_emoji") {
    const url = emoji.url || store.realmEmoji[emoji.code || emoji.emoji_code]?.source_url;
    return html`<img class="emoji-img" src=${url} alt=":${emoji.name || emoji.emoji_name}:" />`;
  }
  return html`<span class="emoji-char" aria-hidden="true">${emojiChar(emoji.code || emoji.emoji_code)}</span>`;
}

function EmojiPicker({ anchor, onPick }) {
  const [query, setQuery] = useState("");
  const input = useRef(null);
  const panel = useRef(null);
  useEffect(() => input.current?.focus(), []);
  useEffect(() => {
    const onDown = (e) => {
      if (panel.current && !panel.current.contains(e.target) && e.target !== anchor) closeAllPopovers();
    };
    document.addEventListener("mousedown", onDown);
    return () => document.removeEventListener("mousedown", onDown);
  }, []);
  const list = store.emojiNames ? searchEmoji(query, 60) : QUICK;
  const rect = anchor?.getBoundingClientRect?.() || { left: 100, bottom: 100, top: 100 };
  const top = Math.max(8, Math.min(rect.bottom + 4, window.innerHeight - 330));
  const left = Math.max(8, Math.min(rect.left, window.innerWidth - 300));
  const pick = (e) => {
    popover = null;
    changed();
    onPick(e);
    anchor?.focus?.();
  };
  return html`
    <div class="popover emoji-picker" ref=${panel} role="dialog" aria-label="Emoji picker" style=${{ top: top + "px", left: left + "px" }}>
      <label class="visually-hidden" for="emoji-search">Search emoji</label>
      <input id="emoji-search" ref=${input} type="search" placeholder="Search emoji" value=${query}
        onInput=${(e) => setQuery(e.target.value)}
        onKeyDown=${(e) => { if (e.key === "Enter" && list[0]) { e.preventDefault(); pick(list[0]); } }} />
      <ul class="emoji-grid" role="listbox" aria-label="Emoji">
        ${list.map((e) => html`
          <li key=${e.type + e.name}>
            <button type="button" class="emoji-choice" title=":${e.name}:" aria-label=${e.name} onClick=${() => pick(e)}>
              <${EmojiGlyph} emoji=${e} />
            </button>
          </li>`)}
      </ul>
    </div>`;
}

export function Popovers() {
  if (!popover) return null;
  if (popover.kind === "emoji") return html`<${EmojiPicker} key=${popover.id} anchor=${popover.anchor} onPick=${popover.onPick} />`;
  return null;
}
