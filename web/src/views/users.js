/** The right sidebar: people in the organization with their presence; a click opens the DM. */
import { html, useState } from "../ui.js";
import { store } from "../store/index.js";
import { presenceOf } from "../presence.js";
import { narrowToHash } from "../narrow.js";

const ORDER = { active: 0, idle: 1, offline: 2 };

export function UserList() {
  const [filter, setFilter] = useState("");
  const q = filter.toLowerCase();
  const users = [...store.users.values()]
    .filter((u) => u.is_active !== false && !u.is_bot && (!q || u.full_name.toLowerCase().includes(q)))
    .map((u) => ({ u, p: presenceOf(u.user_id) }))
    .sort((a, b) => ORDER[a.p] - ORDER[b.p] || a.u.full_name.localeCompare(b.u.full_name));
  return html`
    <h2 class="sidebar-heading">Users</h2>
    <label class="visually-hidden" for="user-filter">Filter users</label>
    <input id="user-filter" type="search" placeholder="Filter users" value=${filter} onInput=${(e) => setFilter(e.target.value)} />
    <ul class="nav-list users">
      ${users.slice(0, 300).map(({ u, p }) => html`
        <li key=${u.user_id}>
          <a class="nav-link" href=${narrowToHash([{ operator: "dm", operand: [u.user_id] }], store)}>
            <span class="presence presence-${p}" role="img" aria-label=${p}></span>
            <span class="nav-label">${u.full_name}</span>
          </a>
        </li>`)}
    </ul>`;
}
