/** The compose box: channel + topic or DM recipients, the message text with @ and : typeahead,
 * uploads (button, paste, drag and drop), `enter_sends`, typing notifications and drafts. */
import { html, useEffect, useRef, useState } from "../ui.js";
import * as api from "../api.js";
import { store, changed } from "../store/index.js";
import { compose, openCompose, closeCompose, sendMessage, scheduleDraft, composeTarget } from "../store/compose.js";
import { typed } from "../typing.js";
import { suggestionsFor } from "./typeahead.js";
import { EmojiGlyph, openEmojiPicker } from "./popover.js";

function Recipients() {
  const [query, setQuery] = useState("");
  const [open, setOpen] = useState(false);
  const q = query.toLowerCase();
  const matches = q
    ? [...store.users.values()].filter((u) => u.is_active !== false && !compose.userIds.includes(u.user_id) && (u.full_name.toLowerCase().includes(q) || u.email.toLowerCase().includes(q))).slice(0, 8)
    : [];
  const add = (u) => {
    compose.userIds = [...compose.userIds, u.user_id];
    setQuery("");
    changed();
  };
  return html`<div class="recipients">
    <span id="compose-to-label">To:</span>
    <ul class="pills" aria-label="Recipients">
      ${compose.userIds.map((id) => html`<li key=${id} class="pill">${store.users.get(id)?.full_name ?? id}
        <button type="button" aria-label="Remove ${store.users.get(id)?.full_name ?? id}" onClick=${() => { compose.userIds = compose.userIds.filter((x) => x !== id); changed(); }}>×</button></li>`)}
    </ul>
    <input id="compose-to" aria-labelledby="compose-to-label" role="combobox" aria-expanded=${open && matches.length > 0} aria-controls="compose-to-list"
      placeholder="Add a person" value=${query} autocomplete="off"
      onInput=${(e) => { setQuery(e.target.value); setOpen(true); }}
      onKeyDown=${(e) => {
        if ((e.key === "Enter" || e.key === "Tab") && matches[0]) { e.preventDefault(); add(matches[0]); }
        if (e.key === "Backspace" && !query && compose.userIds.length) { compose.userIds = compose.userIds.slice(0, -1); changed(); }
      }} />
    ${open && matches.length ? html`<ul id="compose-to-list" class="typeahead" role="listbox">
      ${matches.map((u) => html`<li key=${u.user_id} role="option"><button type="button" onMouseDown=${(e) => { e.preventDefault(); add(u); }}>${u.full_name} <span class="muted">${u.email}</span></button></li>`)}
    </ul>` : null}
  </div>`;
}

export function Compose() {
  const textarea = useRef(null);
  const [suggest, setSuggest] = useState(null);
  const [active, setActive] = useState(0);
  const [uploading, setUploading] = useState(0);
  const [dragging, setDragging] = useState(false);

  // The request to focus a field stays until a render has the field: an effect of an earlier
  // render (still pending when `c` or `x` opened the box) must not consume it.
  useEffect(() => {
    if (!compose.open || !compose.focus) return;
    const id = { topic: "compose-topic", to: "compose-to", content: "compose-content" }[compose.focus];
    const field = document.getElementById(id);
    if (!field) return;
    compose.focus = null;
    field.focus();
  });

  if (!compose.open) {
    return html`<div class="compose-closed">
      <button type="button" onClick=${() => openCompose(defaultTarget())}>New message <kbd>c</kbd></button>
      <button type="button" onClick=${() => openCompose({ type: "dm", userIds: [], focus: "to" })}>New direct message <kbd>x</kbd></button>
    </div>`;
  }

  const enterSends = !!store.settings.enter_sends;
  const topics = store.topics.get(compose.streamId) || [];

  const setContent = (value) => {
    compose.content = value;
    scheduleDraft();
    typed(composeTarget());
    changed();
  };

  const insert = (text) => {
    const el = textarea.current;
    const start = el ? el.selectionStart : compose.content.length;
    const end = el ? el.selectionEnd : start;
    const value = compose.content.slice(0, start) + text + compose.content.slice(end);
    setContent(value);
    queueMicrotask(() => {
      if (!el) return;
      el.focus();
      el.selectionStart = el.selectionEnd = start + text.length;
    });
  };

  const uploadFiles = async (files) => {
    for (const file of files) {
      setUploading((n) => n + 1);
      const placeholder = `[Uploading ${file.name || "image"}…]`;
      insert(placeholder);
      try {
        const { url, filename } = await api.uploadFile(file);
        compose.content = compose.content.replace(placeholder, `[${filename}](${url})`);
      } catch (error) {
        compose.content = compose.content.replace(placeholder, "");
        compose.error = error.message;
      } finally {
        setUploading((n) => n - 1);
        scheduleDraft();
        changed();
      }
    }
  };

  const refreshSuggest = (el) => {
    const s = suggestionsFor(el.value, el.selectionStart);
    setSuggest(s);
    setActive(0);
  };

  const choose = (item) => {
    const el = textarea.current;
    const cursor = el.selectionStart;
    const value = compose.content.slice(0, suggest.start) + item.insert + compose.content.slice(cursor);
    const pos = suggest.start + item.insert.length;
    setSuggest(null);
    setContent(value);
    queueMicrotask(() => {
      el.focus();
      el.selectionStart = el.selectionEnd = pos;
    });
  };

  const onKeyDown = (e) => {
    if (suggest) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const n = suggest.items.length;
        setActive((active + (e.key === "ArrowDown" ? 1 : n - 1)) % n);
        return;
      }
      if (e.key === "Enter" || e.key === "Tab") {
        e.preventDefault();
        choose(suggest.items[active]);
        return;
      }
      if (e.key === "Escape") {
        e.stopPropagation();
        setSuggest(null);
        return;
      }
    }
    if (e.key === "Enter") {
      const modified = e.ctrlKey || e.metaKey;
      if ((enterSends && !e.shiftKey && !modified) || (!enterSends && modified)) {
        e.preventDefault();
        sendMessage();
      }
    }
  };

  const onPaste = (e) => {
    const files = [...(e.clipboardData?.files || [])];
    if (files.length) {
      e.preventDefault();
      uploadFiles(files);
    }
  };

  const onDrop = (e) => {
    setDragging(false);
    const files = [...(e.dataTransfer?.files || [])];
    if (files.length) {
      e.preventDefault();
      uploadFiles(files);
    }
  };

  const submit = (e) => {
    e.preventDefault();
    sendMessage();
  };

  return html`
    <form class="compose ${dragging ? "dragging" : ""}" aria-label="Compose message" onSubmit=${submit}
      onDragOver=${(e) => { e.preventDefault(); setDragging(true); }} onDragLeave=${() => setDragging(false)} onDrop=${onDrop}>
      <div class="compose-target">
        <div class="segmented" role="group" aria-label="Message type">
          <button type="button" aria-pressed=${compose.type === "stream"} onClick=${() => { compose.type = "stream"; changed(); }}>Channel</button>
          <button type="button" aria-pressed=${compose.type === "dm"} onClick=${() => { compose.type = "dm"; changed(); }}>Direct</button>
        </div>
        ${compose.type === "stream"
          ? html`
            <label class="visually-hidden" for="compose-channel">Channel</label>
            <select id="compose-channel" value=${compose.streamId ?? ""} onChange=${(e) => { compose.streamId = Number(e.target.value); changed(); }}>
              ${[...store.subs.values()].sort((a, b) => a.name.localeCompare(b.name)).map((s) => html`<option value=${s.stream_id}>#${s.name}</option>`)}
            </select>
            <span aria-hidden="true">›</span>
            <label class="visually-hidden" for="compose-topic">Topic</label>
            <input id="compose-topic" list="compose-topics" placeholder="Topic" maxlength="60" value=${compose.topic}
              onInput=${(e) => { compose.topic = e.target.value; changed(); }} />
            <datalist id="compose-topics">${topics.slice(0, 20).map((t) => html`<option value=${t.name} />`)}</datalist>`
          : html`<${Recipients} />`}
        <button type="button" class="icon-button" aria-label="Close compose box" onClick=${closeCompose}>✕</button>
      </div>
      <div class="compose-input">
        <label class="visually-hidden" for="compose-content">Message</label>
        <textarea id="compose-content" ref=${textarea} rows="3" placeholder=${enterSends ? "Message (Enter sends, Shift+Enter for a new line)" : "Message (Ctrl+Enter sends)"}
          value=${compose.content} aria-autocomplete="list" aria-controls=${suggest ? "compose-suggest" : undefined}
          onInput=${(e) => { setContent(e.target.value); refreshSuggest(e.target); }}
          onKeyDown=${onKeyDown} onPaste=${onPaste}
          onClick=${(e) => refreshSuggest(e.target)} onBlur=${() => setTimeout(() => setSuggest(null), 150)}></textarea>
        ${suggest ? html`<ul id="compose-suggest" class="typeahead" role="listbox" aria-label="Suggestions">
          ${suggest.items.map((item, i) => html`<li key=${item.key} role="option" aria-selected=${i === active} class=${i === active ? "active" : ""}>
            <button type="button" tabindex="-1" onMouseDown=${(e) => { e.preventDefault(); choose(item); }}>
              ${item.emoji ? html`<${EmojiGlyph} emoji=${item.emoji} /> ` : null}${item.label} ${item.detail ? html`<span class="muted">${item.detail}</span>` : null}
            </button></li>`)}
        </ul>` : null}
      </div>
      ${compose.error ? html`<p class="error" role="alert">${compose.error}</p>` : null}
      <div class="compose-actions">
        <label class="button-like">📎 Upload<input type="file" class="visually-hidden" multiple aria-label="Upload files"
          onChange=${(e) => { uploadFiles([...e.target.files]); e.target.value = ""; }} /></label>
        <button type="button" aria-label="Insert emoji" onClick=${(e) => openEmojiPicker(e.currentTarget, (emoji) => insert(`:${emoji.name}: `))}>☺</button>
        ${uploading ? html`<span role="status">Uploading…</span>` : null}
        ${compose.draftId ? html`<span class="muted">Draft saved</span>` : null}
        <button type="submit" class="primary" disabled=${compose.sending || uploading > 0}>Send</button>
      </div>
    </form>`;
}

/** `c` in a channel narrow composes there; elsewhere in the first subscribed channel. */
function defaultTarget() {
  const narrow = store.view?.narrow || [];
  const channel = narrow.find((t) => t.operator === "channel");
  const topic = narrow.find((t) => t.operator === "topic");
  const dm = narrow.find((t) => t.operator === "dm");
  if (dm) return { type: "dm", userIds: [].concat(dm.operand) };
  return { type: "stream", streamId: channel ? Number(channel.operand) : undefined, topic: topic ? topic.operand : "", focus: topic ? "content" : "topic" };
}
