/** Desktop notifications for direct messages and mentions while the tab is in the background, as
 * the user's settings ask (`enable_desktop_notifications` for channels, DMs and mentions always
 * unless `pm_content_in_desktop_notifications` hides their text). The browser's permission is asked
 * for only from a click in the settings (browsers refuse it otherwise). */
import { store } from "./store/index.js";
import { narrowToHash } from "./narrow.js";

export function notificationsAllowed() {
  return typeof Notification !== "undefined" && Notification.permission === "granted";
}

export function askPermission() {
  if (typeof Notification !== "undefined") return Notification.requestPermission();
  return Promise.resolve("denied");
}

function onMessage(event) {
  const message = event.detail;
  if (!notificationsAllowed() || document.visibilityState === "visible") return;
  if (message.sender_id === store.me.user_id) return;
  const flags = message.flags || [];
  const personal = message.type === "private" || flags.includes("mentioned");
  if (!personal) {
    // a channel's own setting wins; null means "as the global setting"
    const own = store.subs.get(message.stream_id)?.desktop_notifications;
    if (!(own ?? store.settings.enable_desktop_notifications)) return;
  }
  const title = message.type === "private" ? message.sender_full_name : `${message.sender_full_name} in #${message.display_recipient} > ${message.subject}`;
  const showContent = store.settings.pm_content_in_desktop_notifications !== false;
  const text = showContent ? new DOMParser().parseFromString(message.content, "text/html").body.textContent.slice(0, 200) : "New message";
  const n = new Notification(title, { body: text, tag: String(message.id) });
  n.onclick = () => {
    window.focus();
    const narrow = message.type === "private"
      ? [{ operator: "dm", operand: message.display_recipient.map((r) => r.id).filter((id) => id !== store.me.user_id) }]
      : [{ operator: "channel", operand: message.stream_id }, { operator: "topic", operand: message.subject }];
    window.location.hash = narrowToHash(narrow, store);
  };
}

export function startNotifications() {
  window.addEventListener("parley:message", onMessage);
}
