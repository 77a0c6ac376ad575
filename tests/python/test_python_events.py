"""Event queues through the official Python client (`pip install zulip`) against the real binary.

Starts `parley` with a 1 s heartbeat and a 3 s queue timeout, then a bot listens with the real
`zulip.Client.call_on_each_event` in a thread while the owner produces messages, a direct
message, an edit, a topic move, a reaction, a subscription and typing notifications. Checks:

- the bot sees each produced event exactly once and in order; heartbeats arrive on an idle queue;
- across a graceful restart (SIGTERM, event_queues.json, start again on the same data dir) the
  bot keeps its queue (call_on_each_event never re-registers), misses nothing and sees nothing
  twice; a hand-polled queue keeps its queue_id and its event ids stay contiguous;
- an unpolled queue is collected: GET /events answers BAD_EVENT_QUEUE_ID ("Bad event queue ID:
  <id>") and registering again works; call_on_each_event recovers by itself, both when its
  queue is collected while it is paused and when its queue is deleted with DELETE /events.

Usage: test_python_events.py --parley PATH [--database-url URL]
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import traceback

import requests
import zulip

from checks import Server, check, finish, free_port


EVENT_TYPES = ["message", "update_message", "reaction", "subscription", "typing"]
HEARTBEAT_SECONDS = 1
QUEUE_TIMEOUT_SECONDS = 3


def wait_until(predicate, timeout, step=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


class Listener:
    """The real `call_on_each_event` in a daemon thread, on its own zulip.Client.

    `register` and `get_events` of that client are wrapped (not replaced) to record the queue
    ids it registers and every raw response, heartbeats included, which the client hides; the
    wrapper can also hold the next poll back to let the server collect the queue.
    """

    def __init__(self, client):
        self.client = client
        self.events = []  # what the callback got, in order
        self.registered = []  # queue ids returned by register, in order
        self.responses = []  # (queue_id, raw response) for every get_events
        self.pause_seconds = 0.0
        self.lock = threading.Lock()
        real_register = client.register
        real_get_events = client.get_events

        def register(*args, **kwargs):
            res = real_register(*args, **kwargs)
            if res.get("result") == "success":
                with self.lock:
                    self.registered.append(res["queue_id"])
            return res

        def get_events(**request):
            pause, self.pause_seconds = self.pause_seconds, 0.0
            if pause:
                time.sleep(pause)
            res = real_get_events(**request)
            with self.lock:
                self.responses.append((request.get("queue_id"), res))
            return res

        client.register = register
        client.get_events = get_events

    def callback(self, event):
        with self.lock:
            self.events.append(event)

    def start(self):
        thread = threading.Thread(
            target=self.client.call_on_each_event,
            args=(self.callback,),
            kwargs={"event_types": EVENT_TYPES},
            daemon=True,
        )
        thread.start()
        return thread

    def heartbeats_since(self, index):
        with self.lock:
            return sum(
                1 for _, res in self.responses[index:]
                for ev in res.get("events", []) if ev.get("type") == "heartbeat"
            )

    def errors(self):
        with self.lock:
            return [(q, res) for q, res in self.responses if res.get("result") != "success"]


class ManualPoller(threading.Thread):
    """A queue registered and polled by hand with client.register / client.get_events."""

    def __init__(self, client):
        super().__init__(daemon=True)
        self.client = client
        res = client.register(event_types=EVENT_TYPES)
        self.register_response = res
        self.queue_id = res.get("queue_id")
        self.last_event_id = res.get("last_event_id", -1)
        self.events = []
        self.errors = []
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            try:
                res = self.client.get_events(queue_id=self.queue_id, last_event_id=self.last_event_id)
            except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as e:
                self.errors.append({"exception": repr(e)})
                time.sleep(0.2)
                continue
            if res.get("result") != "success":
                self.errors.append(res)
                if res.get("code") == "BAD_EVENT_QUEUE_ID":
                    return
                time.sleep(0.2)
                continue
            for event in res["events"]:
                self.events.append(event)
                self.last_event_id = max(self.last_event_id, int(event["id"]))

    def stop(self):
        self.stopping.set()
        self.join(timeout=10)


def signature(event):
    """What identifies one produced event, independent of ids and timestamps."""
    kind = event.get("type")
    if kind == "message":
        return ("message", event["message"]["id"])
    if kind == "update_message":
        return ("update_message", event.get("message_id"), "content" in event,
                "subject" in event or "topic" in event, tuple(sorted(event.get("message_ids", []))))
    if kind == "reaction":
        return ("reaction", event.get("op"), event.get("message_id"), event.get("emoji_name"))
    if kind == "subscription":
        names = tuple(sorted(s.get("name", "") for s in event.get("subscriptions", [])))
        return ("subscription", event.get("op"), names)
    if kind == "typing":
        return ("typing", event.get("op"), (event.get("sender") or {}).get("user_id"))
    return (kind, event.get("id"))


def contiguous(ids):
    return all(b == a + 1 for a, b in zip(ids, ids[1:]))


def check_delivery(name, listener, expected, start_index):
    """The listener's events from start_index hold the expected signatures once each, in order."""
    wanted = set(expected)
    ok = wait_until(
        lambda: sum(1 for e in listener.events[start_index:] if signature(e) in wanted) >= len(expected),
        timeout=10,
    )
    time.sleep(0.3)  # anything extra (a duplicate) would arrive right behind
    got = [signature(e) for e in listener.events[start_index:]]
    relevant = [s for s in got if s in wanted]
    check(f"{name}: every event arrives", ok, {"expected": expected, "got": got})
    check(f"{name}: exactly once and in order", relevant == expected, {"expected": expected, "got": got})
    return got


def run(server, data_dir, site):
    owner = zulip.Client(config_file=os.path.join(data_dir, "owner.zuliprc"))
    owner_id = owner.get_profile()["user_id"]
    created = owner.create_user(
        {"email": "listener@parley.local", "password": "listener-pass", "full_name": "Listener Bot"}
    )
    check("create the bot user", created["result"] == "success", created)
    bot_id = created["user_id"]
    key = owner.call_endpoint(
        url="fetch_api_key", method="POST",
        request={"username": "listener@parley.local", "password": "listener-pass"},
    )
    check("fetch_api_key for the bot", key["result"] == "success", key)

    def bot_client():
        return zulip.Client(email=key["email"], api_key=key["api_key"], site=site)

    bot = bot_client()
    added = owner.add_subscriptions(
        streams=[{"name": "events", "description": "Event tests"}], principals=[owner_id, bot_id]
    )
    check("a channel both are subscribed to", added["result"] == "success", added)

    # The hand-polled queue and the call_on_each_event thread.
    manual = ManualPoller(bot_client())
    check("register a manual queue", manual.register_response.get("result") == "success",
          manual.register_response)
    manual.start()
    listener = Listener(bot_client())
    listener.start()
    check("call_on_each_event registers a queue", wait_until(lambda: listener.registered, 10),
          listener.responses)
    first_queue = listener.registered[0] if listener.registered else None

    # ---- Everything another user can do, produced by the owner.
    expected = []
    sent = []

    def send(request):
        res = owner.send_message(request)
        check(f"send {request['type']} message", res["result"] == "success", res)
        if res["result"] == "success":
            sent.append(res["id"])
            expected.append(("message", res["id"]))
        return res.get("id")

    m1 = send({"type": "stream", "to": "events", "topic": "alpha", "content": "first"})
    m2 = send({"type": "stream", "to": "events", "topic": "alpha", "content": "second"})
    m3 = send({"type": "stream", "to": "events", "topic": "alpha", "content": "third"})
    send({"type": "private", "to": [key["email"]], "content": "a direct message"})

    res = owner.update_message({"message_id": m1, "content": "first, edited"})
    check("edit a message", res["result"] == "success", res)
    expected.append(("update_message", m1, True, False, (m1,)))
    res = owner.update_message({
        "message_id": m2, "topic": "beta", "propagate_mode": "change_all",
        "send_notification_to_old_thread": False, "send_notification_to_new_thread": False,
    })
    check("move a topic", res["result"] == "success", res)
    expected.append(("update_message", m2, False, True, tuple(sorted([m1, m2, m3]))))
    res = owner.add_reaction({"message_id": m3, "emoji_name": "smile"})
    check("add a reaction", res["result"] == "success", res)
    expected.append(("reaction", "add", m3, "smile"))
    res = owner.add_subscriptions(streams=[{"name": "events-two"}], principals=[bot_id])
    check("subscribe the bot to a new channel", res["result"] == "success", res)
    expected.append(("subscription", "add", ("events-two",)))
    for op in ("start", "stop"):
        res = owner.set_typing_status({"type": "direct", "op": op, "to": [bot_id]})
        check(f"typing {op} (POST /typing)", res.get("result") == "success", res)
        if res.get("result") == "success":
            expected.append(("typing", op, owner_id))

    got = check_delivery("call_on_each_event", listener, expected, 0)
    others = [s for s in got if s not in set(expected)]
    if others:
        print(f"info other events the bot received: {others}")
    check("no event is delivered twice", len(got) == len(set(got)), got)

    # ---- Heartbeats on an idle queue (the client drops them before the callback).
    mark = len(listener.responses)
    manual_mark = len(manual.events)
    time.sleep(2.5)
    beats = listener.heartbeats_since(mark)
    check("heartbeats arrive on the idle call_on_each_event queue", beats >= 1, beats)
    manual_beats = [e for e in manual.events[manual_mark:] if e.get("type") == "heartbeat"]
    check("heartbeats arrive on the idle manual queue", len(manual_beats) >= 1, manual.events[manual_mark:])
    check("heartbeats do not reach the callback",
          not any(e.get("type") == "heartbeat" for e in listener.events), listener.events)

    # ---- Graceful restart.
    before_restart = len(listener.events)
    manual_before = len(manual.events)
    code = server.stop()
    check("SIGTERM: parley exits with code 0", code == 0, f"{code}\n{server.log_tail()}")
    if server.database_url:
        # On PostgreSQL a stopping server hands its queues to the database, for whichever
        # server starts next (docs/scaling.md).
        handed = subprocess.run(["psql", server.database_url, "-tAc", "SELECT queue_id FROM queue_handoffs"],
                                capture_output=True, text=True)
        check("SIGTERM: the queues are handed to the database", handed.returncode == 0, handed.stderr)
        check("the hand-over holds both queues",
              first_queue is not None and any(manual.queue_id in line for line in handed.stdout.split())
              and any(first_queue in line for line in handed.stdout.split()),
              {"manual": manual.queue_id, "listener": first_queue, "handed": handed.stdout})
    else:
        dump = os.path.join(data_dir, "event_queues.json")
        check("SIGTERM: event_queues.json is written", os.path.exists(dump), os.listdir(data_dir))
        if os.path.exists(dump):
            with open(dump) as f:
                text = f.read()
            check("the dump holds both queues",
                  manual.queue_id in text and first_queue is not None and first_queue in text,
                  {"manual": manual.queue_id, "listener": first_queue})
            try:
                json.loads(text)
                check("the dump is JSON", True)
            except ValueError as e:
                check("the dump is JSON", False, e)
    time.sleep(0.5)  # the pollers now see connection errors and retry
    server.start()

    after = []
    for i in range(3):
        after.append(owner.send_message(
            {"type": "stream", "to": "events", "topic": "after restart", "content": f"after {i}"}))
    after.append(owner.send_message({"type": "private", "to": [key["email"]], "content": "dm after"}))
    check("the owner sends after the restart", all(r["result"] == "success" for r in after), after)
    after_ids = [r.get("id") for r in after]
    sent.extend(after_ids)
    expected_after = [("message", i) for i in after_ids]
    got_after = check_delivery("across the restart", listener, expected_after, before_restart)
    check("across the restart: call_on_each_event kept its queue (no re-register)",
          listener.registered == [first_queue], {"registered": listener.registered,
                                                 "errors": listener.errors()})
    all_messages = [e["message"]["id"] for e in listener.events if e["type"] == "message"]
    check("across the restart: no message seen twice", len(all_messages) == len(set(all_messages)),
          all_messages)
    check("across the restart: every sent message seen",
          set(sent) <= set(all_messages), {"sent": sent, "seen": all_messages})
    del got_after

    # The hand-polled queue: same queue id, contiguous ids, the new messages.
    wait_until(lambda: {i for i in after_ids} <= {e["message"]["id"] for e in manual.events
                                                   if e["type"] == "message"}, 10)
    manual.stop()
    bad = [e for e in manual.errors if isinstance(e, dict) and e.get("code") == "BAD_EVENT_QUEUE_ID"]
    check("manual queue: same queue_id after the restart (never BAD_EVENT_QUEUE_ID)", not bad, manual.errors)
    ids = [int(e["id"]) for e in manual.events]
    check("manual queue: event ids contiguous from 0 across the restart",
          ids and ids[0] == 0 and contiguous(ids), ids)
    manual_msgs = [e["message"]["id"] for e in manual.events if e["type"] == "message"]
    check("manual queue: every message once, in order, across the restart",
          manual_msgs == sent, {"sent": sent, "got": manual_msgs})
    check("manual queue: got events after the restart", len(manual.events) > manual_before, manual.events)
    res = bot.deregister(manual.queue_id)
    check("DELETE /events for the manual queue", res.get("result") == "success", res)

    # ---- Collection: an unpolled queue; and call_on_each_event's queue while it is paused.
    q = bot.register(event_types=["message"])
    check("register a queue to be collected", q.get("result") == "success", q)
    paused_queue = listener.registered[-1]
    registrations = len(listener.registered)
    listener.pause_seconds = QUEUE_TIMEOUT_SECONDS + QUEUE_TIMEOUT_SECONDS / 2 + 1.5
    index = len(listener.events)
    time.sleep(QUEUE_TIMEOUT_SECONDS + QUEUE_TIMEOUT_SECONDS / 2 + 1.0)
    res = bot.get_events(queue_id=q["queue_id"], last_event_id=-1)
    check("a collected queue is BAD_EVENT_QUEUE_ID", res.get("code") == "BAD_EVENT_QUEUE_ID", res)
    check("with msg 'Bad event queue ID: <id>'",
          res.get("msg") == f"Bad event queue ID: {q['queue_id']}", res)
    check("the error names the queue", res.get("queue_id") == q["queue_id"], res)
    again = bot.register(event_types=["message"])
    check("registering again works", again.get("result") == "success", again)
    message = owner.send_message({"type": "stream", "to": "events", "topic": "recovered", "content": "hi"})
    res = bot.get_events(queue_id=again.get("queue_id"), last_event_id=again.get("last_event_id"))
    ids = [e["message"]["id"] for e in res.get("events", []) if e.get("type") == "message"]
    check("the new queue receives a new message", ids == [message.get("id")], res)
    bot.deregister(again["queue_id"])

    ok = wait_until(lambda: len(listener.registered) > registrations, 10)
    check("call_on_each_event gets BAD_EVENT_QUEUE_ID for its collected queue",
          any(r.get("code") == "BAD_EVENT_QUEUE_ID" and qid == paused_queue
              for qid, r in listener.errors()), listener.errors())
    check("call_on_each_event re-registers after its queue was collected", ok, listener.registered)
    later = owner.send_message({"type": "stream", "to": "events", "topic": "recovered", "content": "later"})
    check_delivery("after re-registering", listener, [("message", later.get("id"))], index)

    # ---- DELETE /events on the queue call_on_each_event is using.
    current = listener.registered[-1]
    registrations = len(listener.registered)
    index = len(listener.events)
    res = bot.deregister(current)
    check("DELETE /events on the listener's queue", res.get("result") == "success", res)
    ok = wait_until(lambda: len(listener.registered) > registrations, 10)
    check("the listener's waiting poll gets BAD_EVENT_QUEUE_ID",
          any(r.get("code") == "BAD_EVENT_QUEUE_ID" and qid == current for qid, r in listener.errors()),
          listener.errors())
    check("call_on_each_event re-registers after DELETE /events", ok, listener.registered)
    last = owner.send_message({"type": "stream", "to": "events", "topic": "recovered", "content": "last"})
    check_delivery("after DELETE /events", listener, [("message", last.get("id"))], index)
    all_messages = [e["message"]["id"] for e in listener.events if e["type"] == "message"]
    check("overall: no message delivered twice", len(all_messages) == len(set(all_messages)), all_messages)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parley", required=True)
    parser.add_argument("--database-url")
    args = parser.parse_args()

    started = time.time()
    with tempfile.TemporaryDirectory() as data_dir, tempfile.TemporaryDirectory() as log_dir:
        port = free_port()
        site = f"http://127.0.0.1:{port}"
        server = Server(args.parley, data_dir, port, args.database_url, os.path.join(log_dir, "parley.log"),
                        extra_args=("--heartbeat-seconds", str(HEARTBEAT_SECONDS), "--queue-timeout-seconds", str(QUEUE_TIMEOUT_SECONDS)))
        try:
            server.start()
            run(server, data_dir, site)
        except Exception:
            traceback.print_exc()
            check("no exception", False, server.log_tail())
        finally:
            code = server.stop()
            check("parley shuts down cleanly on SIGTERM", code == 0, f"{code}\n{server.log_tail()}")
    backend = "PostgreSQL" if args.database_url else "SQLite"
    print(f"Python client event queues against parley on {backend} ({time.time() - started:.1f} s):")
    return finish("python-client")


if __name__ == "__main__":
    sys.exit(main())
