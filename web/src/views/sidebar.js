/** The left sidebar: views, subscribed channels with unread counts, the current channel's topics
 * (resolved ones marked ✔), recent direct-message conversations, drafts, and the channel browser. */
import { html, useEffect, useState } from "../ui.js";
import * as api from "../api.js";
import { store, changed } from "../store/index.js";
import { route, goNarrow } from "../router.js";
import { narrowToHash } from "../narrow.js";
import { restoreDraft } from "../store/compose.js";
import { ChannelBrowser } from "./channels.js";
import { layout } from "./layout.js";

const RESOLVED = "✔ ";

/** Topics of a channel, newest first (GET /users/me/{stream_id}/topics), fetched once per channel. */
function useTopics(streamId) {
  useEffect(() => {
    if (!streamId || store.topics.has(streamId)) return;
    store.topics.set(streamId, null);
    api.get(`/users/me/${streamId}/topics`).then(
      (answer) => {
        store.topics.set(streamId, answer.topics);
        changed();
      },
      () => store.topics.delete(streamId),
    );
  }, [streamId, store.topics.has(streamId)]);
  return store.topics.get(streamId) || [];
}

function Count({ n, label }) {
  return n ? html`<span class="unread-count" aria-label="${n} unread${label ? " " + label : ""}">${n}</span>` : null;
}

function NavLink({ narrow, children, current, count, cls = "" }) {
  const hash = narrowToHash(narrow, store);
  const onClick = () => {
    layout.left = false;
  };
  return html`<a href=${hash} class="nav-link ${cls}" aria-current=${current ? "page" : undefined} onClick=${onClick}>
    <span class="nav-label">${children}</span><${Count} n=${count} /></a>`;
}

function dmName(key) {
  const ids = key.split(",").map(Number);
  return ids.map((id) => store.users.get(id)?.full_name ?? `User ${id}`).join(", ");
}

export function LeftSidebar() {
  const counts = store.unreads.counts();
  const narrow = route.kind === "narrow" ? route.narrow : [];
  const channelTerm = narrow.find((t) => t.operator === "channel" && !t.negated);
  const topicTerm = narrow.find((t) => t.operator === "topic" && !t.negated);
  const currentStream = channelTerm ? Number(channelTerm.operand) : null;
  const topics = useTopics(currentStream);
  const [browsing, setBrowsing] = useState(false);
  const [showDrafts, setShowDrafts] = useState(false);
  const subs = [...store.subs.values()].sort((a, b) => (b.pin_to_top ? 1 : 0) - (a.pin_to_top ? 1 : 0) || a.name.localeCompare(b.name));
  const is = (op) => narrow.length === 1 && narrow[0].operator === "is" && narrow[0].operand === op;
  const dmTerm = narrow.length === 1 && narrow[0].operator === "dm" ? [].concat(narrow[0].operand).sort((a, b) => a - b).join(",") : null;
  const drafts = [...store.drafts.values()].sort((a, b) => b.timestamp - a.timestamp);
  return html`
    <ul class="nav-list views">
      <li><${NavLink} narrow=${[]} current=${narrow.length === 0} count=${counts.total}>Combined feed<//></li>
      <li><${NavLink} narrow=${[{ operator: "is", operand: "mentioned" }]} current=${is("mentioned")} count=${counts.mentions}>Mentions<//></li>
      <li><${NavLink} narrow=${[{ operator: "is", operand: "starred" }]} current=${is("starred")}>Starred messages<//></li>
      <li><button type="button" class="nav-link" aria-expanded=${showDrafts} onClick=${() => setShowDrafts(!showDrafts)}>
        <span class="nav-label">Drafts</span>${drafts.length ? html`<span class="count-muted">${drafts.length}</span>` : null}</button>
        ${showDrafts ? html`<ul class="drafts-list" aria-label="Drafts">
          ${drafts.length === 0 ? html`<li class="muted">No drafts.</li>` : null}
          ${drafts.map((d) => html`<li key=${d.id}><button type="button" class="draft" onClick=${() => restoreDraft(d)}>
            <span class="draft-to">${d.type === "stream" ? `#${store.streams.get(d.to[0])?.name ?? "?"} > ${d.topic}` : dmName(d.to.join(","))}</span>
            <span class="draft-text">${d.content.slice(0, 80)}</span></button></li>`)}
        </ul>` : null}
      </li>
    </ul>
    <h2 class="sidebar-heading">Channels
      <button type="button" class="small-button" onClick=${() => setBrowsing(true)}>Browse</button></h2>
    <ul class="nav-list channels" aria-label="Subscribed channels">
      ${subs.map((s) => html`
        <li key=${s.stream_id} class=${s.is_muted ? "muted" : ""}>
          <${NavLink} narrow=${[{ operator: "channel", operand: s.stream_id }]} current=${currentStream === s.stream_id && !topicTerm} count=${counts.streams.get(s.stream_id)}>
            <span class="channel-dot" style=${{ background: s.color || "#888" }} aria-hidden="true"></span>${s.invite_only ? "🔒" : "#"}${s.name}
          <//>
          ${currentStream === s.stream_id ? html`
            <ul class="nav-list topics" aria-label="Topics in ${s.name}">
              ${topics.slice(0, 30).map((t) => {
                const resolved = t.name.startsWith(RESOLVED);
                return html`<li key=${t.name}>
                  <${NavLink} cls=${resolved ? "resolved" : ""}
                    narrow=${[{ operator: "channel", operand: s.stream_id }, { operator: "topic", operand: t.name }]}
                    current=${topicTerm && String(topicTerm.operand).toLowerCase() === t.name.toLowerCase()}
                    count=${counts.topics.get(s.stream_id + "\n" + t.name.toLowerCase())}>
                    ${resolved ? html`<span class="resolved-mark" aria-label="resolved">✔</span> ${t.name.slice(RESOLVED.length)}` : t.name || html`<i>general chat</i>`}
                  <//></li>`;
              })}
            </ul>` : null}
        </li>`)}
    </ul>
    <h2 class="sidebar-heading">Direct messages
      <a class="small-button" href="#narrow/is/dm">All<${Count} n=${counts.dmTotal} /></a></h2>
    <ul class="nav-list dms" aria-label="Direct message conversations">
      ${(store.recentDms || []).slice(0, 15).map((c) => html`
        <li key=${c.key}><${NavLink} narrow=${[{ operator: "dm", operand: c.key.split(",").map(Number) }]} current=${dmTerm === c.key} count=${counts.dms.get(c.key)}>${dmName(c.key)}<//></li>`)}
    </ul>
    ${browsing ? html`<${ChannelBrowser} onClose=${() => setBrowsing(false)} />` : null}
  `;
}

export { goNarrow };
