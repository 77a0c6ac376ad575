/** Settings over the app: the user's own (profile, password, theme, enter_sends, notifications) and,
 * for administrators, the organization's (basics, users and roles, invitations). */
import { html, useEffect, useState } from "../ui.js";
import * as api from "../api.js";
import { store } from "../store/index.js";
import { goHash, goNarrow, route } from "../router.js";
import { askPermission, notificationsAllowed } from "../notifications.js";

const ROLES = { 100: "Owner", 200: "Administrator", 300: "Moderator", 400: "Member", 600: "Guest" };

/** Runs an API call, reporting success or the server's error next to the form. */
function useSave() {
  const [status, setStatus] = useState(null);
  /** Resolves to whether the call succeeded. */
  const save = async (fn, done = "Saved.") => {
    setStatus({ busy: true });
    try {
      await fn();
      setStatus({ ok: done });
      return true;
    } catch (error) {
      setStatus({ error: error.message });
      return false;
    }
  };
  const view = status?.error
    ? html`<p class="error" role="alert">${status.error}</p>`
    : status?.ok
      ? html`<p class="ok" role="status">${status.ok}</p>`
      : null;
  return [save, view, status?.busy];
}

function Profile() {
  const [name, setName] = useState(store.me.full_name);
  const [oldPassword, setOld] = useState("");
  const [newPassword, setNew] = useState("");
  const [save, status] = useSave();
  const [savePw, pwStatus] = useSave();
  const [saveAvatar, avatarStatus] = useSave();
  const avatar = store.users.get(store.me.user_id)?.avatar_url;
  return html`
    <section aria-labelledby="profile-h"><h2 id="profile-h">Profile</h2>
      <form class="stacked" onSubmit=${(e) => { e.preventDefault(); save(() => api.patch("/settings", { full_name: name })); }}>
        <label>Full name <input id="settings-full-name" value=${name} maxlength="60" onInput=${(e) => setName(e.target.value)} /></label>
        <button type="submit">Save name</button>${status}
      </form>
      <div class="avatar-setting">
        ${avatar ? html`<img class="avatar large" src=${avatar} alt="Your avatar" width="80" height="80" />` : null}
        <label class="button-like">Upload avatar<input type="file" accept="image/*" class="visually-hidden"
          onChange=${(e) => { const f = e.target.files[0]; if (!f) return; const form = new FormData(); form.append("file", f); saveAvatar(() => api.call("POST", "/users/me/avatar", null, { body: form })); }} /></label>
        <button type="button" onClick=${() => saveAvatar(() => api.del("/users/me/avatar"))}>Use default</button>
        ${avatarStatus}
      </div>
    </section>
    <section aria-labelledby="pw-h"><h2 id="pw-h">Password</h2>
      <form class="stacked" onSubmit=${(e) => { e.preventDefault(); savePw(() => api.patch("/settings", { old_password: oldPassword, new_password: newPassword }), "Password changed."); }}>
        <label>Current password <input type="password" autocomplete="current-password" value=${oldPassword} onInput=${(e) => setOld(e.target.value)} /></label>
        <label>New password <input type="password" autocomplete="new-password" value=${newPassword} onInput=${(e) => setNew(e.target.value)} /></label>
        <button type="submit">Change password</button>${pwStatus}
      </form>
    </section>`;
}

/** A personal setting's value as the control shows it: the one just chosen while PATCH /settings
 * and its `user_settings` event are on their way (else a re-render in between would put the old
 * value back under the person's hand), then the store's. A refused change shows the old one. */
function useSetting(name, save) {
  const [chosen, setChosen] = useState(null);
  const stored = store.settings[name];
  useEffect(() => setChosen(null), [stored]);
  const choose = async (value) => {
    setChosen({ value });
    if (!(await save(() => api.patch("/settings", { [name]: value })))) setChosen(null);
  };
  return [chosen ? chosen.value : stored, choose];
}

/** One boolean setting of PATCH /settings as a checkbox. */
function Toggle({ name, label }) {
  const [save, status] = useSave();
  const [value, choose] = useSetting(name, save);
  return html`<div><label class="inline"><input type="checkbox" checked=${!!value}
    onChange=${(e) => choose(e.target.checked)} /> ${label}</label>${status}</div>`;
}

function Preferences() {
  const [save, status] = useSave();
  const [theme, chooseTheme] = useSetting("color_scheme", save);
  return html`<section aria-labelledby="pref-h"><h2 id="pref-h">Preferences</h2>
    <label>Theme <select id="settings-theme" value=${theme ?? 1}
      onChange=${(e) => chooseTheme(Number(e.target.value))}>
      <option value="1">Automatic</option><option value="2">Dark</option><option value="3">Light</option>
    </select></label>${status}
    <${Toggle} name="enter_sends" label="Enter sends the message (Shift+Enter for a new line)" />
    <${Toggle} name="twenty_four_hour_time" label="24-hour time" />
  </section>`;
}

function Notifications() {
  const [, setPermission] = useState(null);
  return html`<section aria-labelledby="notif-h"><h2 id="notif-h">Notifications</h2>
    ${notificationsAllowed()
      ? html`<p class="muted">This browser may show desktop notifications.</p>`
      : html`<p><button type="button" onClick=${() => askPermission().then(setPermission)}>Allow desktop notifications in this browser</button></p>`}
    <${Toggle} name="enable_desktop_notifications" label="Desktop notifications for channel messages" />
    <${Toggle} name="enable_sounds" label="Sounds" />
    <${Toggle} name="enable_offline_email_notifications" label="Email me about direct messages and mentions while I am away" />
    <${Toggle} name="enable_offline_push_notifications" label="Mobile push notifications while I am away" />
    <${Toggle} name="wildcard_mentions_notify" label="Notify me about @all and @everyone" />
    <${Toggle} name="pm_content_in_desktop_notifications" label="Show message content in notifications" />
  </section>`;
}

function OrgProfile() {
  const [name, setName] = useState(store.realm.name || "");
  const [description, setDescription] = useState(store.realm.description || "");
  const [save, status] = useSave();
  return html`<section aria-labelledby="org-h"><h2 id="org-h">Organization</h2>
    <form class="stacked" onSubmit=${(e) => { e.preventDefault(); save(() => api.patch("/realm", { name, description })); }}>
      <label>Name <input value=${name} onInput=${(e) => setName(e.target.value)} /></label>
      <label>Description <textarea rows="4" value=${description} onInput=${(e) => setDescription(e.target.value)}></textarea></label>
      <button type="submit">Save</button>${status}
    </form></section>`;
}

function Users() {
  const [save, status] = useSave();
  const users = [...store.users.values()].filter((u) => !u.is_bot).sort((a, b) => a.full_name.localeCompare(b.full_name));
  return html`<section aria-labelledby="users-h"><h2 id="users-h">Users</h2>${status}
    <table class="users-table"><thead><tr><th>Name</th><th>Email</th><th>Role</th><th></th></tr></thead>
    <tbody>${users.map((u) => html`<tr key=${u.user_id}>
      <td>${u.full_name}</td><td>${u.email}</td>
      <td><label class="visually-hidden" for="role-${u.user_id}">Role of ${u.full_name}</label>
        <select id="role-${u.user_id}" value=${u.role} disabled=${u.user_id === store.me.user_id}
          onChange=${(e) => save(() => api.patch(`/users/${u.user_id}`, { role: Number(e.target.value) }))}>
          ${Object.entries(ROLES).map(([v, label]) => html`<option value=${v}>${label}</option>`)}
        </select></td>
      <td>${u.user_id === store.me.user_id ? null : u.is_active === false
        ? html`<button type="button" onClick=${() => save(() => api.post(`/users/${u.user_id}/reactivate`))}>Reactivate</button>`
        : html`<button type="button" class="danger" onClick=${() => confirm(`Deactivate ${u.full_name}?`) && save(() => api.del(`/users/${u.user_id}`))}>Deactivate</button>`}</td>
    </tr>`)}</tbody></table></section>`;
}

function Invitations() {
  const [invites, setInvites] = useState([]);
  const [emails, setEmails] = useState("");
  const [role, setRole] = useState(400);
  const [link, setLink] = useState(null);
  const [save, status] = useSave();
  const [saveEmail, emailStatus] = useSave();
  const reload = () => api.get("/invites").then((a) => setInvites(a.invites || []), () => {});
  useEffect(() => { reload(); }, []);
  const defaultStreams = [...store.subs.keys()];
  const createLink = () => save(async () => {
    const answer = await api.post("/invites/multiuse", { invite_as: role, stream_ids: defaultStreams, invite_expires_in_minutes: 10080 });
    setLink(answer.invite_link);
    reload();
  }, "Link created.");
  const sendEmails = (e) => {
    e.preventDefault();
    saveEmail(async () => {
      try {
        await api.post("/invites", { invitee_emails: emails, invite_as: role, stream_ids: defaultStreams, invite_expires_in_minutes: 10080 });
      } catch (error) {
        // a server without email invitations answers 404 (or 405: GET /invites exists)
        if (error.status === 404 || error.status === 405) throw new Error(`Email invitations are not available on this server (${error.message})`);
        throw error;
      }
      setEmails("");
      reload();
    }, "Invitations sent.");
  };
  return html`<section aria-labelledby="inv-h"><h2 id="inv-h">Invitations</h2>
    <label>Invite as <select value=${role} onChange=${(e) => setRole(Number(e.target.value))}>
      ${Object.entries(ROLES).filter(([v]) => v !== "100").map(([v, label]) => html`<option value=${v}>${label}</option>`)}
    </select></label>
    <form class="stacked" onSubmit=${sendEmails}>
      <label>Email addresses (comma or newline separated) <textarea rows="3" value=${emails} onInput=${(e) => setEmails(e.target.value)}></textarea></label>
      <button type="submit" disabled=${!emails.trim()}>Send invitations</button>${emailStatus}
    </form>
    <p><button type="button" onClick=${createLink}>Create a reusable invitation link</button></p>${status}
    ${link ? html`<p><label>Link <input class="wide-input" readonly value=${link} onFocus=${(e) => e.target.select()} /></label></p>` : null}
    <h3>Open invitations</h3>
    <ul class="invites">${invites.map((i) => html`<li key=${i.id}>
      ${i.is_multiuse ? html`Link ${i.link_url}` : i.email} (${ROLES[i.invited_as] || i.invited_as})
      <button type="button" onClick=${() => save(async () => { await api.del(i.is_multiuse ? `/invites/multiuse/${i.id}` : `/invites/${i.id}`); reload(); }, "Revoked.")}>Revoke</button>
    </li>`)}</ul>
  </section>`;
}

const PAGES = {
  settings: { profile: ["Profile", Profile], preferences: ["Preferences", Preferences], notifications: ["Notifications", Notifications] },
  organization: { profile: ["Organization", OrgProfile], users: ["Users", Users], invitations: ["Invitations", Invitations] },
};

export function Settings({ kind, page }) {
  const [, Page] = PAGES[kind]?.[page] || PAGES.settings.profile;
  const close = () => goNarrow(route.narrow || []);
  return html`<div class="settings-overlay" role="dialog" aria-modal="true" aria-labelledby="settings-title">
    <div class="settings">
      <div class="dialog-head"><h1 id="settings-title">Settings</h1>
        <button type="button" class="icon-button" aria-label="Close settings" onClick=${close}>✕</button></div>
      <div class="settings-body">
        <nav aria-label="Settings pages"><ul>
          ${Object.entries(PAGES.settings).map(([key, [label]]) => html`<li><a href="#settings/${key}" aria-current=${kind === "settings" && page === key ? "page" : undefined}>${label}</a></li>`)}
          ${store.isAdmin() ? Object.entries(PAGES.organization).map(([key, [label]]) => html`<li><a href="#organization/${key}" aria-current=${kind === "organization" && page === key ? "page" : undefined}>${label}</a></li>`) : null}
        </ul>
        <button type="button" class="link-button sign-out" onClick=${api.logout}>Sign out</button></nav>
        <div class="settings-page"><${Page} /></div>
      </div>
    </div></div>`;
}

export { goHash };
