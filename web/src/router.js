/** The address bar: which narrow or settings page is shown. Hash routes as the reference web app
 * (`#narrow/...`, `#settings/...`, `#organization/...`), so the back button and bookmarks work and the
 * server only ever serves `/`. */
import { hashToNarrow, narrowToHash } from "./narrow.js";
import { store, changed } from "./store/index.js";
import { openNarrow } from "./store/messages.js";

export const route = { kind: "narrow", narrow: [], page: null };

function sameNarrow(a, b) {
  return JSON.stringify(a || []) === JSON.stringify(b || []);
}

/** Reads location.hash; opens the narrow when it changed. */
export function readHash() {
  const hash = window.location.hash || "#feed";
  const [head, page] = hash.replace(/^#/, "").split("/");
  if (head === "settings" || head === "organization") {
    Object.assign(route, { kind: head, page: page || (head === "settings" ? "profile" : "profile") });
  } else {
    const narrow = hashToNarrow(hash) || [];
    const wasNarrow = route.kind === "narrow";
    Object.assign(route, { kind: "narrow", page: null });
    if (!wasNarrow || !sameNarrow(narrow, route.narrow) || !store.view) {
      route.narrow = narrow;
      if (!store.view || !sameNarrow(store.view.narrow, narrow)) openNarrow(narrow);
    }
  }
  changed();
}

/** Goes to a narrow (pushes history, so Back returns). */
export function goNarrow(narrow) {
  const hash = narrowToHash(narrow, store);
  if (window.location.hash === hash) readHash();
  else window.location.hash = hash;
}

export function goHash(hash) {
  window.location.hash = hash;
}

export function startRouter() {
  window.addEventListener("hashchange", readHash);
  readHash();
}
