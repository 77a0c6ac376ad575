/** Real time: one event queue (POST /register), long-polled with GET /events. A queue the server no
 * longer knows (BAD_EVENT_QUEUE_ID: collected while the tab slept, or lost) means register again and
 * reload the state; a network error or a restarting server means try the same queue again after a
 * growing, jittered delay — Parley keeps its queues across a graceful restart. */
import * as api from "./api.js";

const EVENT_TYPES = undefined; // all of them

/** Starts the loop; `onRegister(state, isFirst)` and `onEvents(events)` apply them, `onStatus`
 * reports "connected" / "reconnecting". Returns a stop function. */
export function startEvents({ onRegister, onEvents, onStatus }) {
  let stopped = false;
  let queueId = null;
  let lastEventId = -1;
  let failures = 0;
  let first = true;
  let controller = null;

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const backoff = () => Math.min(30000, 500 * 2 ** Math.min(failures, 6)) * (0.75 + Math.random() / 2);

  async function register() {
    const state = await api.post("/register", {
      apply_markdown: true,
      client_gravatar: false,
      slim_presence: true,
      include_subscribers: false,
      event_types: EVENT_TYPES,
      client_capabilities: { notification_settings_null: true, user_settings_object: true, bulk_message_deletion: true, empty_topic_name: true },
    });
    queueId = state.queue_id;
    lastEventId = state.last_event_id;
    onRegister(state, first);
    first = false;
  }

  async function loop() {
    while (!stopped) {
      try {
        if (!queueId) await register();
        controller = new AbortController();
        // after a failure, a non-blocking poll first: it tells at once whether the server is back
        // (a blocking one would only answer at the next event or heartbeat)
        const params = { queue_id: queueId, last_event_id: lastEventId, dont_block: failures > 0 || undefined };
        const answer = await api.get("/events", params, { signal: controller.signal });
        if (failures) onStatus("connected");
        failures = 0;
        const events = answer.events || [];
        for (const e of events) lastEventId = Math.max(lastEventId, e.id);
        const real = events.filter((e) => e.type !== "heartbeat");
        if (real.length) onEvents(real);
      } catch (error) {
        if (stopped || error.name === "AbortError") return;
        if (error.code === "BAD_EVENT_QUEUE_ID") {
          queueId = null;
          continue;
        }
        if (error.status === 401) {
          window.location.href = "/login/?next=" + encodeURIComponent(location.pathname + location.hash);
          return;
        }
        failures++;
        onStatus("reconnecting");
        await sleep(backoff());
      }
    }
  }

  loop();
  return () => {
    stopped = true;
    if (controller) controller.abort();
    if (queueId) api.del("/events", { queue_id: queueId }).catch(() => {});
  };
}
