/** The channel browser: every channel the user can see, with subscribe/unsubscribe, and a form to
 * create one (POST /users/me/subscriptions with a new name creates it). */
import { html, useState } from "../ui.js";
import * as api from "../api.js";
import { store } from "../store/index.js";
import { goNarrow } from "../router.js";
import { Dialog } from "./dialog.js";

export function ChannelBrowser({ onClose }) {
  const [error, setError] = useState(null);
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [isPrivate, setPrivate] = useState(false);
  const [busy, setBusy] = useState(false);
  const run = async (fn) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (e) {
      setError(e.message);
    } finally {
      setBusy(false);
    }
  };
  const subscribe = (s) => run(() => api.post("/users/me/subscriptions", { subscriptions: [{ name: s.name }] }));
  const unsubscribe = (s) => run(() => api.del("/users/me/subscriptions", { subscriptions: [s.name] }));
  const create = (e) => {
    e.preventDefault();
    run(async () => {
      await api.post("/users/me/subscriptions", { subscriptions: [{ name, description }], invite_only: isPrivate });
      setName("");
      setDescription("");
    });
  };
  const streams = [...store.streams.values()].filter((s) => !s.is_archived).sort((a, b) => a.name.localeCompare(b.name));
  return html`
    <${Dialog} title="Channels" onClose=${onClose} wide>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <ul class="channel-browser">
        ${streams.map((s) => {
          const subscribed = store.subs.has(s.stream_id);
          return html`<li key=${s.stream_id}>
            <div class="channel-info">
              <button type="button" class="link-button channel-name" onClick=${() => { onClose(); goNarrow([{ operator: "channel", operand: s.stream_id }]); }}>
                ${s.invite_only ? "🔒" : "#"}${s.name}</button>
              <span class="muted">${s.description}</span>
            </div>
            <button type="button" disabled=${busy} aria-label="${subscribed ? "Unsubscribe from" : "Subscribe to"} ${s.name}"
              onClick=${() => (subscribed ? unsubscribe(s) : subscribe(s))}>${subscribed ? "Unsubscribe" : "Subscribe"}</button>
          </li>`;
        })}
      </ul>
      <form class="create-channel" onSubmit=${create}>
        <h3>Create a channel</h3>
        <label>Name <input required maxlength="60" value=${name} onInput=${(e) => setName(e.target.value)} /></label>
        <label>Description <input value=${description} onInput=${(e) => setDescription(e.target.value)} /></label>
        <label class="inline"><input type="checkbox" checked=${isPrivate} onChange=${(e) => setPrivate(e.target.checked)} /> Private</label>
        <button type="submit" disabled=${busy || !name.trim()}>Create</button>
      </form>
    <//>`;
}
