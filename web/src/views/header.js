/** The top bar: organization, search (narrow operators in a text box), settings and sign-out. */
import { html, useEffect, useState } from "../ui.js";
import { store, changed } from "../store/index.js";
import { route, goNarrow, goHash } from "../router.js";
import { parseSearch, narrowToSearch } from "../narrow.js";
import { logout } from "../api.js";
import { layout } from "./layout.js";

export function Header() {
  const current = route.kind === "narrow" ? narrowToSearch(route.narrow, store) : "";
  const [text, setText] = useState(current);
  useEffect(() => setText(current), [current]);
  const submit = (e) => {
    e.preventDefault();
    const narrow = parseSearch(text, store);
    document.getElementById("search-input")?.blur();
    goNarrow(narrow);
  };
  const toggle = (side) => {
    layout[side] = !layout[side];
    changed();
  };
  return html`
    <header class="top-bar">
      <button type="button" class="icon-button only-narrow" aria-label="Show channels" aria-expanded=${layout.left} onClick=${() => toggle("left")}>☰</button>
      <a class="realm-name" href="#feed">${store.realm.name || "Parley"}</a>
      <form class="search" role="search" onSubmit=${submit}>
        <label class="visually-hidden" for="search-input">Search messages</label>
        <input id="search-input" type="search" placeholder="Search (channel: topic: sender: is: has:)" autocomplete="off"
          value=${text} onInput=${(e) => setText(e.target.value)} />
      </form>
      <button type="button" class="icon-button only-narrow" aria-label="Show users" aria-expanded=${layout.right} onClick=${() => toggle("right")}>👥</button>
      <button type="button" class="icon-button" aria-label="Settings" onClick=${() => goHash("#settings/profile")}>⚙</button>
      <button type="button" class="link-button" onClick=${logout}>Sign out</button>
    </header>`;
}
