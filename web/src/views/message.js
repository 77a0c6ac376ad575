/** One message: avatar, sender, time, the server's rendered HTML, edited/moved marks, reactions, star,
 * and the actions the user may take on it (react, reply, edit, move, delete). */
import { html, useState, useRef, useEffect } from "../ui.js";
import * as api from "../api.js";
import { store, changed } from "../store/index.js";
import { formatTime, formatFull, displayHtml, initials } from "../format.js";
import { openEmojiPicker, EmojiGlyph } from "./popover.js";
import { Dialog } from "./dialog.js";
import { selection, replyToSelected } from "./selection.js";

function Avatar({ message }) {
  const url = message.avatar_url || store.users.get(message.sender_id)?.avatar_url;
  const [failed, setFailed] = useState(false);
  // an avatar that cannot load (an external Gravatar while offline) falls back to initials
  if (url && !failed) return html`<img class="avatar" src=${url} alt="" width="36" height="36" loading="lazy" onError=${() => setFailed(true)} />`;
  return html`<span class="avatar avatar-initials" aria-hidden="true">${initials(message.sender_full_name)}</span>`;
}

/** Reactions grouped by emoji, with the people who reacted and whether I did. */
function aggregate(reactions, myId) {
  const byKey = new Map();
  for (const r of reactions || []) {
    const key = r.reaction_type + ":" + r.emoji_code;
    if (!byKey.has(key)) byKey.set(key, { ...r, count: 0, mine: false, names: [] });
    const agg = byKey.get(key);
    agg.count++;
    const uid = r.user_id ?? r.user?.id;
    if (uid === myId) agg.mine = true;
    agg.names.push(store.users.get(uid)?.full_name ?? "someone");
  }
  return [...byKey.values()];
}

export async function toggleReaction(message, emoji, mine) {
  const params = { emoji_name: emoji.emoji_name ?? emoji.name, emoji_code: emoji.emoji_code ?? emoji.code, reaction_type: emoji.reaction_type ?? emoji.type };
  try {
    if (mine) await api.del(`/messages/${message.id}/reactions`, params);
    else await api.post(`/messages/${message.id}/reactions`, params);
  } catch (error) {
    alert(error.message);
  }
}

async function toggleStar(message) {
  const starred = message.flags.includes("starred");
  try {
    await api.post("/messages/flags", { messages: [message.id], op: starred ? "remove" : "add", flag: "starred" });
  } catch (error) {
    alert(error.message);
  }
}

function canEdit(message) {
  if (message.sender_id !== store.me.user_id) return false;
  if (store.realm.allow_message_editing === false) return false;
  const limit = store.realm.message_content_edit_limit_seconds;
  return !limit || Date.now() / 1000 - message.timestamp < limit;
}

function canMove(message) {
  return message.type === "stream" && (message.sender_id === store.me.user_id || store.isAdmin());
}

function canDelete(message) {
  return store.isAdmin() || message.sender_id === store.me.user_id;
}

function EditBox({ message, onDone }) {
  const [text, setText] = useState(null);
  const [error, setError] = useState(null);
  const ref = useRef(null);
  useEffect(() => {
    api.get(`/messages/${message.id}`, { apply_markdown: false }).then(
      (answer) => setText(answer.message?.content ?? answer.raw_content ?? ""),
      (e) => setError(e.message),
    );
  }, []);
  useEffect(() => {
    if (text !== null) ref.current?.focus();
  }, [text === null]);
  const save = async (e) => {
    e.preventDefault();
    try {
      await api.patch(`/messages/${message.id}`, { content: text });
      onDone();
    } catch (err) {
      setError(err.message);
    }
  };
  return html`<form class="edit-box" onSubmit=${save}>
    <label class="visually-hidden" for="edit-${message.id}">Edit message</label>
    <textarea id="edit-${message.id}" ref=${ref} rows="3" value=${text ?? ""} disabled=${text === null}
      onInput=${(e) => setText(e.target.value)}
      onKeyDown=${(e) => { if (e.key === "Escape") { e.stopPropagation(); onDone(); } if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) save(e); }}></textarea>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <button type="submit">Save</button> <button type="button" onClick=${onDone}>Cancel</button>
  </form>`;
}

function MoveDialog({ message, onClose }) {
  const [topic, setTopic] = useState(message.subject);
  const [streamId, setStreamId] = useState(message.stream_id);
  const [mode, setMode] = useState("change_all");
  const [error, setError] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    const params = { propagate_mode: mode };
    if (topic !== message.subject) params.topic = topic;
    if (Number(streamId) !== message.stream_id) params.stream_id = Number(streamId);
    try {
      await api.patch(`/messages/${message.id}`, params);
      onClose();
    } catch (err) {
      setError(err.message);
    }
  };
  const resolved = message.subject.startsWith("✔ ");
  return html`<${Dialog} title="Move messages" onClose=${onClose}>
    <form onSubmit=${submit} class="stacked">
      <label>Channel <select value=${streamId} onChange=${(e) => setStreamId(e.target.value)}>
        ${[...store.subs.values()].map((s) => html`<option value=${s.stream_id}>${s.name}</option>`)}
      </select></label>
      <label>Topic <input value=${topic} onInput=${(e) => setTopic(e.target.value)} /></label>
      <label>Which messages <select value=${mode} onChange=${(e) => setMode(e.target.value)}>
        <option value="change_one">Only this message</option>
        <option value="change_later">This and later messages</option>
        <option value="change_all">All messages in the topic</option>
      </select></label>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <div class="buttons">
        <button type="button" onClick=${() => setTopic(resolved ? message.subject.slice(2) : "✔ " + message.subject)}>${resolved ? "Mark unresolved" : "Mark resolved"}</button>
        <button type="submit">Move</button>
      </div>
    </form>
  <//>`;
}

function DeleteDialog({ message, onClose }) {
  const [error, setError] = useState(null);
  const confirm = async () => {
    try {
      await api.del(`/messages/${message.id}`);
      onClose();
    } catch (err) {
      setError(err.message);
    }
  };
  return html`<${Dialog} title="Delete message?" onClose=${onClose}>
    <p>This deletes the message for everyone.</p>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <div class="buttons"><button type="button" onClick=${onClose}>Cancel</button> <button type="button" class="danger" onClick=${confirm}>Delete</button></div>
  <//>`;
}

export function Message({ message, prev, selected }) {
  const [mode, setMode] = useState(null); // "edit" | "move" | "delete"
  const me = store.me.user_id;
  const flags = message.flags || [];
  const unread = !flags.includes("read");
  const mentioned = flags.some((f) => f === "mentioned" || f === "wildcard_mentioned");
  const starred = flags.includes("starred");
  const continued = prev && prev.sender_id === message.sender_id && message.timestamp - prev.timestamp < 600;
  const cls = ["message", unread ? "unread" : "", mentioned ? "mentioned" : "", selected ? "selected" : "", continued ? "continued" : ""].join(" ");
  const reactions = aggregate(message.reactions, me);
  const edited = message.last_edit_timestamp ? "edited" : message.last_moved_timestamp ? "moved" : null;
  return html`
    <li class=${cls} data-id=${message.id} tabindex="-1" aria-label="Message from ${message.sender_full_name}"
      onClick=${() => { if (selection.id !== message.id) { selection.id = message.id; changed(); } }}>
      ${continued ? html`<span class="avatar-space"></span>` : html`<${Avatar} message=${message} />`}
      <div class="message-body">
        <div class="message-meta">
          ${continued ? null : html`<span class="sender">${message.sender_full_name}</span>`}
          <time datetime=${new Date(message.timestamp * 1000).toISOString()} title=${formatFull(message.timestamp)}>${formatTime(message.timestamp)}</time>
          ${edited ? html`<span class="edited-mark">(${edited})</span>` : null}
          ${starred ? html`<span class="star-mark" aria-label="starred">★</span>` : null}
          <span class="message-actions">
            <button type="button" class="icon-button" aria-label="Add reaction" title="Add reaction"
              onClick=${(e) => openEmojiPicker(e.currentTarget, (emoji) => toggleReaction(message, emoji, reactions.some((r) => r.mine && r.emoji_code === emoji.code)))}>☺</button>
            <button type="button" class="icon-button" aria-label=${starred ? "Unstar" : "Star"} aria-pressed=${starred} title="Star" onClick=${() => toggleStar(message)}>${starred ? "★" : "☆"}</button>
            <button type="button" class="icon-button" aria-label="Reply" title="Reply (r)" onClick=${() => replyToSelected(message)}>↩</button>
            ${canEdit(message) ? html`<button type="button" class="icon-button" aria-label="Edit" title="Edit" onClick=${() => setMode("edit")}>✎</button>` : null}
            ${canMove(message) ? html`<button type="button" class="icon-button" aria-label="Move" title="Move" onClick=${() => setMode("move")}>⇄</button>` : null}
            ${canDelete(message) ? html`<button type="button" class="icon-button" aria-label="Delete" title="Delete" onClick=${() => setMode("delete")}>🗑</button>` : null}
          </span>
        </div>
        ${mode === "edit"
          ? html`<${EditBox} message=${message} onDone=${() => setMode(null)} />`
          : html`<div class="message-content rendered" dangerouslySetInnerHTML=${{ __html: displayHtml(message.content) }}></div>`}
        ${reactions.length ? html`<ul class="reactions" aria-label="Reactions">
          ${reactions.map((r) => html`<li key=${r.reaction_type + r.emoji_code}>
            <button type="button" class="reaction ${r.mine ? "mine" : ""}" aria-pressed=${r.mine}
              title="${r.names.join(", ")} reacted with :${r.emoji_name}:" aria-label="${r.emoji_name}: ${r.count}"
              onClick=${() => toggleReaction(message, r, r.mine)}>
              <${EmojiGlyph} emoji=${r} /> <span class="reaction-count">${r.count}</span></button></li>`)}
        </ul>` : null}
      </div>
      ${mode === "move" ? html`<${MoveDialog} message=${message} onClose=${() => setMode(null)} />` : null}
      ${mode === "delete" ? html`<${DeleteDialog} message=${message} onClose=${() => setMode(null)} />` : null}
    </li>`;
}
