/** The page: header with search, channels on the left, the narrow's messages and the compose box in
 * the centre, people on the right; settings open over it. Global keyboard shortcuts live here. */
import { html, useEffect, useState } from "../ui.js";
import { store, subscribe, changed } from "../store/index.js";
import { route, goNarrow } from "../router.js";
import { narrowTitle } from "../narrow.js";
import { compose, openCompose, closeCompose } from "../store/compose.js";
import { Header } from "./header.js";
import { LeftSidebar } from "./sidebar.js";
import { UserList } from "./users.js";
import { MessageList } from "./messages.js";
import { moveSelection, replyToSelected } from "./selection.js";
import { Compose } from "./compose.js";
import { Settings } from "./settings.js";
import { closeAllPopovers, Popovers } from "./popover.js";
import { layout } from "./layout.js";

function useStore() {
  const [, setTick] = useState(0);
  useEffect(() => subscribe(() => setTick((t) => t + 1)), []);
}

const typingInField = (target) =>
  target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));

/** The reference's main keys: c, x, r, Esc, /, arrows (and j/k). */
function onKeyDown(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "Escape") {
    if (closeAllPopovers()) return;
    if (typingInField(event.target)) {
      event.target.blur();
      if (compose.open && !compose.content) closeCompose();
      return;
    }
    if (route.kind !== "narrow") return goNarrow(route.narrow || []);
    if (compose.open) return closeCompose();
    if (layout.left || layout.right) {
      layout.left = layout.right = false;
      return changed();
    }
    return;
  }
  if (typingInField(event.target) || document.querySelector("dialog[open]")) return;
  const narrow = store.view?.narrow || [];
  switch (event.key) {
    case "c": {
      event.preventDefault();
      const channel = narrow.find((t) => t.operator === "channel");
      openCompose({ type: "stream", streamId: channel ? Number(channel.operand) : undefined, topic: "", focus: "topic" });
      break;
    }
    case "x": {
      event.preventDefault();
      const dm = narrow.find((t) => t.operator === "dm");
      openCompose({ type: "dm", userIds: dm ? [].concat(dm.operand) : [], focus: dm ? "content" : "to" });
      break;
    }
    case "Enter":
      // Enter on a focused link or button is theirs
      if (event.target.closest("a, button")) return;
    // falls through
    case "r":
      event.preventDefault();
      replyToSelected();
      break;
    case "/":
      event.preventDefault();
      document.getElementById("search-input")?.select();
      break;
    case "ArrowDown":
    case "j":
      event.preventDefault();
      moveSelection(1);
      break;
    case "ArrowUp":
    case "k":
      event.preventDefault();
      moveSelection(-1);
      break;
    case "End":
      event.preventDefault();
      moveSelection(Infinity);
      break;
  }
}

export function App() {
  useStore();
  useEffect(() => {
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, []);
  const title = route.kind === "narrow" ? narrowTitle(route.narrow, store) : "Settings";
  const unread = store.ready ? store.unreads.where.size : 0;
  useEffect(() => {
    document.title = `${unread ? `(${unread}) ` : ""}${title} - ${store.realm.name || "Parley"}`;
  }, [title, unread, store.realm.name]);
  if (!store.ready) return html`<p class="loading" role="status">Loading…</p>`;
  const cls = ["app", layout.left ? "show-left" : "", layout.right ? "show-right" : ""].join(" ");
  return html`
    <div class=${cls}>
      <${Header} />
      <nav class="left-sidebar" aria-label="Channels and conversations"><${LeftSidebar} /></nav>
      <main class="centre" aria-label=${title}>
        ${store.connection !== "connected"
          ? html`<p class="connection-banner" role="status">${store.connection === "reconnecting" ? "Reconnecting to the server…" : "Connecting…"}</p>`
          : null}
        <${MessageList} title=${title} />
        <${Compose} />
      </main>
      <aside class="right-sidebar" aria-label="Users"><${UserList} /></aside>
      ${route.kind !== "narrow" ? html`<${Settings} kind=${route.kind} page=${route.page} />` : null}
      <${Popovers} />
    </div>
  `;
}
