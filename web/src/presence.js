/** Presence: reports this tab as active every minute (POST /users/me/presence, which also answers
 * everyone's presence), and classifies users as the reference does — active if seen in the last
 * 140 s, idle if merely connected, offline otherwise. */
import * as api from "./api.js";
import { store, changed } from "./store/index.js";

const PING_MS = 60000;
const OFFLINE_S = 140;

async function ping() {
  try {
    const answer = await api.post("/users/me/presence", {
      status: document.visibilityState === "visible" ? "active" : "idle",
      ping_only: false,
      new_user_input: true,
      slim_presence: true,
    });
    if (answer.presences)
      for (const [id, p] of Object.entries(answer.presences)) store.presence.set(Number(id), p);
    changed();
  } catch {
    // the event loop reports connection trouble
  }
}

export function startPresence() {
  ping();
  setInterval(ping, PING_MS);
}

/** "active" | "idle" | "offline" */
export function presenceOf(userId) {
  if (store.me && userId === store.me.user_id) return "active";
  const p = store.presence.get(userId);
  if (!p) return "offline";
  const now = Date.now() / 1000;
  if (p.active_timestamp && now - p.active_timestamp < OFFLINE_S) return "active";
  if (p.idle_timestamp && now - p.idle_timestamp < OFFLINE_S) return "idle";
  return "offline";
}
