/** Entry point: reads the page params, registers an event queue, then renders the app and follows
 * the address bar. */
import "./style.css";
import { html, render } from "./ui.js";
import { pageParams } from "./api.js";
import { store, changed, loadRegister } from "./store/index.js";
import { applyEvents } from "./store/apply.js";
import { catchUp, openNarrow } from "./store/messages.js";
import { hashToNarrow } from "./narrow.js";
import { startEvents } from "./events.js";
import { startRouter } from "./router.js";
import { startPresence } from "./presence.js";
import { applyTheme } from "./theme.js";
import { loadEmoji } from "./emoji.js";
import { startNotifications } from "./notifications.js";
import { App } from "./views/app.js";

// The first screen waits for two requests: POST /register and GET /messages. The narrow is known from
// the address bar before the register answer, so both go out at once; messages that arrive between
// the two are fetched again after the register (catchUp), so none is missed.
const hash = window.location.hash;
const early = !hash || hash === "#feed" ? [] : hashToNarrow(hash);
if (early) openNarrow(early);

const root = document.getElementById("app") || document.body.appendChild(document.createElement("div"));

startEvents({
  onRegister(state, first) {
    loadRegister(state, pageParams.user_id);
    applyTheme(store.settings.color_scheme);
    if (first) {
      root.textContent = "";
      render(html`<${App} />`, root);
      startRouter();
      catchUp();
      startPresence();
      loadEmoji();
      startNotifications();
    } else {
      // a new queue: the events in between are lost, so re-read what the narrow shows
      catchUp();
    }
    store.connection = "connected";
    changed();
  },
  onEvents(events) {
    applyEvents(events);
    if (events.some((e) => e.type === "user_settings" && e.property === "color_scheme")) applyTheme(store.settings.color_scheme);
  },
  onStatus(status) {
    store.connection = status;
    changed();
  },
});

if (!store.ready) root.innerHTML = '<p class="loading" role="status">Loading…</p>';
