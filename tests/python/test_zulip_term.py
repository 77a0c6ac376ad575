"""zulip-term 0.7.0 (the Zulip terminal client) against the real `parley` binary, in tmux.

Starts parley and seeds, through the official Python client, a realm with a long history: 490
messages over four channels, several topics, DMs and group DMs from four senders, which the
terminal user then marks as read, and 20 more it has not read (the first, in `terminal-test`,
opens the unread part; the last is the newest message). Checks that GET /messages with what
zulip-term asks first (anchor=0, use_first_unread_anchor=true, 30 before, 10 after) anchors on
the first unread message. Then writes a zuliprc for that member, runs `zulip-term -c zuliprc
--debug` in a detached tmux session (200x50, private tmux socket) and reads the screen with
`tmux capture-pane -p`. Checks that zulip-term opens on the first unread message (not on the
oldest ones), shows the channel, topics and the unread messages; that the newest message is
reachable (`G` to the last loaded, `j` past it loads the rest); that a message sent by another
user appears live within 2 s; that the channel's topics are listed (`q` to search streams,
`Enter`, `t`) and `Enter` on a topic narrows to it; that a channel message (`r`, text,
`ctrl d`), a DM (`R`, reply privately to the author) and reactions (`+` thumbs_up, and `:` the
emoji picker) typed in zulip-term reach the server and come back as events. zulip-term's own
logs (tracebacks, API requests, in its working directory) and the server's log are printed when
something fails.

zulip-term 0.7.0 declares Python < 3.11; it is installed with `pip install
--ignore-requires-python` and runs unpatched on 3.11 (see .ci/run for the pinned set).

Usage: test_zulip_term.py --parley PATH --zulip-term PATH [--database-url URL]
"""

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import traceback

import zulip

import checks
from checks import check, finish, free_port

CHANNEL = "terminal-test"
TOPIC = "tmux topic"
OTHER_TOPIC = "another topic"
# Channels that only fill the history; no name contains "terminal" (the `q` search below).
BULK_CHANNELS = ["bulk-north", "bulk-south", "bulk-east"]
BULK_TOPICS = ["alpha", "beta", "gamma", "delta"]
READ_MESSAGES = 490  # sent, then marked as read by the terminal user
OLDEST = "oldest seeded message"
FIRST_UNREAD = "hello from the seed script"
NEWEST = "newest seeded message"
LIVE_LIMIT = 2.0  # seconds for a message sent through the API to show up in zulip-term


def tail(path, n=60):
    try:
        with open(path, "rb") as f:
            return b"\n".join(f.read().splitlines()[-n:]).decode(errors="replace")
    except OSError:
        return ""


class Tmux:
    """A tmux server of our own (private socket), one session running one command."""

    def __init__(self, socket_name):
        self.base = ["tmux", "-u", "-L", socket_name, "-f", "/dev/null"]

    def run(self, *args, check=True):
        return subprocess.run(self.base + list(args), check=check, capture_output=True, text=True)

    def start(self, command, width=200, height=50):
        self.run("new-session", "-d", "-s", "zt", "-x", str(width), "-y", str(height), command)

    def screen(self):
        res = self.run("capture-pane", "-p", "-t", "zt", check=False)
        return res.stdout

    def keys(self, *keys, literal=False):
        self.run("send-keys", "-t", "zt", *(["-l"] if literal else []), *keys)

    def wait_for(self, predicate, timeout, interval=0.2):
        deadline = time.time() + timeout
        screen = self.screen()
        while time.time() < deadline:
            if predicate(screen) or "ZT-EXITED" in screen:
                break
            time.sleep(interval)
            screen = self.screen()
        return predicate(screen), screen

    def kill(self):
        self.run("kill-server", check=False)


def left(s):
    """The left panel (streams, topics) of a 200-column screen."""
    return "\n".join(line[:29] for line in s.splitlines())


def middle(s):
    """The message list and everything right of the left panel."""
    return "\n".join(line[30:] for line in s.splitlines())


def send(client, what, **message):
    """Sends one message; a RATE_LIMIT_HIT (200 requests a minute per user, as Zulip) is waited
    out and retried, though the seed spreads its messages over four senders to stay under it."""
    for _ in range(20):
        res = client.send_message(message)
        if res.get("code") != "RATE_LIMIT_HIT":
            break
        print(f"info seed: rate limited, retrying after {res.get('retry-after')} s", flush=True)
        time.sleep(float(res.get("retry-after") or 1))
    if res.get("result") != "success":
        check(f"seed: {what}", False, res)
    return res.get("id")


def seed(owner, site):
    """Builds a realm with a long history: READ_MESSAGES messages over several channels, topics
    and DMs that the terminal user has read, then 20 it has not, opened by FIRST_UNREAD in
    CHANNEL and closed by NEWEST."""
    seed_started = time.time()
    owner_id = owner.get_profile()["user_id"]
    users = {}
    for short, name in [("terminal", "Terminal User"), ("side", "Side Person"),
                        ("third", "Third Person"), ("fourth", "Fourth Person")]:
        created = owner.create_user(
            {"email": f"{short}@parley.local", "password": f"{short}-pass", "full_name": name}
        )
        check(f"create the {short} user", created["result"] == "success", created)
        key = owner.call_endpoint(
            url="fetch_api_key", method="POST",
            request={"username": f"{short}@parley.local", "password": f"{short}-pass"},
        )
        check(f"fetch_api_key for the {short} user", key["result"] == "success", key)
        client = zulip.Client(email=key["email"], api_key=key["api_key"], site=site)
        users[short] = (created["user_id"], key, client)
    terminal_id, key, term = users["terminal"]
    side = users["side"][2]
    senders = [owner, side, users["third"][2], users["fourth"][2]]
    added = owner.add_subscriptions(
        streams=[{"name": CHANNEL, "description": "Seen from zulip-term"}]
        + [{"name": name, "description": "History"} for name in BULK_CHANNELS],
        principals=[owner_id] + [user_id for user_id, _, _ in users.values()],
    )
    check("create the channels", added["result"] == "success", added)

    # The history: channels, topics, a DM now and then, a group DM; all read below. Four
    # senders, about 125 messages each.
    send(owner, OLDEST, type="stream", to=BULK_CHANNELS[0], topic=BULK_TOPICS[0], content=OLDEST)
    for i in range(1, READ_MESSAGES):
        sender = senders[i % len(senders)]
        if i % 25 == 0:
            send(sender, "a DM", type="private", to=[key["email"]], content=f"bulk {i:03d}: a DM")
        elif i % 40 == 7:
            others = [users[u][1]["email"] for u in ["side", "fourth"] if users[u][2] is not sender]
            send(sender, "a group DM", type="private", to=[key["email"]] + others[:2],
                 content=f"bulk {i:03d}: a group DM")
        else:
            channel = BULK_CHANNELS[i % len(BULK_CHANNELS)]
            topic = BULK_TOPICS[(i // 4) % len(BULK_TOPICS)]
            send(sender, "history", type="stream", to=channel, topic=topic,
                 content=f"bulk {i:03d} in {channel} > {topic}")
    read_all = term.call_endpoint(url="mark_all_as_read", method="POST")
    check("the terminal user marks everything as read", read_all["result"] == "success", read_all)

    # The unread part, sent by the others.
    first_unread_id = send(owner, FIRST_UNREAD, type="stream", to=CHANNEL, topic=TOPIC,
                           content=FIRST_UNREAD)
    send(owner, "another topic", type="stream", to=CHANNEL, topic=OTHER_TOPIC,
         content="a message in another topic")
    send(owner, "second", type="stream", to=CHANNEL, topic=TOPIC, content="second seeded message")
    for i in range(16):
        if i == 8:
            send(owner, "an unread DM", type="private", to=[key["email"]], content="an unread DM")
        else:
            channel = BULK_CHANNELS[i % len(BULK_CHANNELS)]
            send(senders[1 + i % 3], "unread", type="stream", to=channel, topic=BULK_TOPICS[i % 2],
                 content=f"unread {i:02d} in {channel}")
    send(side, NEWEST, type="stream", to=BULK_CHANNELS[1], topic=BULK_TOPICS[1], content=NEWEST)
    print(f"info seeded {READ_MESSAGES + 20} messages in {time.time() - seed_started:.1f} s", flush=True)

    # What zulip-term will ask for first: anchor=0 with use_first_unread_anchor=true, 30 before
    # and 10 after, no narrow. The first unread message wins over anchor=0.
    page = term.get_messages({
        "anchor": 0, "use_first_unread_anchor": True, "num_before": 30, "num_after": 10,
        "narrow": [], "apply_markdown": True, "client_gravatar": True,
    })
    ids = [m["id"] for m in page.get("messages", [])]
    check("GET /messages anchor=0&use_first_unread_anchor=true anchors on the first unread message",
          page.get("result") == "success" and page.get("anchor") == first_unread_id,
          {k: page.get(k) for k in ["result", "msg", "anchor", "found_anchor", "found_oldest",
                                    "found_newest"]} | {"first_unread_id": first_unread_id,
                                                        "ids": ids[:3] + ["..."] + ids[-3:]})
    check("... with 30 read messages before it and 10 after it",
          first_unread_id in ids and ids.index(first_unread_id) == 30 and len(ids) == 41, ids)
    check("... found_anchor, not found_oldest, not found_newest",
          page.get("found_anchor") is True and page.get("found_oldest") is False
          and page.get("found_newest") is False, page.get("found_newest"))
    return key, terminal_id


def wait_for_message(client, narrow, predicate, timeout=15):
    """The newest message in `narrow` (as seen by `client`) that satisfies `predicate`."""
    deadline = time.time() + timeout
    page = {}
    while time.time() < deadline:
        page = client.get_messages({"anchor": "newest", "num_before": 10, "num_after": 0,
                                    "narrow": narrow})
        for message in reversed(page.get("messages", [])):
            if predicate(message):
                return message, page
        time.sleep(0.3)
    return None, page


def compose_and_send(tmux, open_keys, opened, typed, what):
    """Opens a compose box with `open_keys` (tried up to three times), types `typed`, sends it
    with `ctrl d`."""
    compose_open = False
    screen = ""
    for _ in range(3):
        tmux.keys(*open_keys)
        compose_open, screen = tmux.wait_for(opened, timeout=3)
        if compose_open:
            break
    check(f"{what} opens the compose box", compose_open, screen)
    if not compose_open:
        return False
    tmux.keys(typed, literal=True)
    ok, screen = tmux.wait_for(lambda s: typed in s, timeout=5)
    check(f"{what}: the text appears in the compose box", ok, screen)
    tmux.keys("C-d")
    return True


def run(owner, site, zulip_term, work_dir, tmux, live_sender=None):
    """Seeds the realm through `site`, starts zulip-term on it and drives it. `live_sender`,
    when given, is called with the work directory (zulip-term's logs are there) once
    zulip-term runs, and returns the client that sends the message zulip-term must show live;
    by default the owner sends it."""
    key, terminal_id = seed(owner, site)
    owner_email = owner.email
    zuliprc = os.path.join(work_dir, "zuliprc")
    with open(zuliprc, "w") as f:
        f.write(f"[api]\nemail={key['email']}\nkey={key['api_key']}\nsite={site}\n")
    os.chmod(zuliprc, 0o600)

    # The pane stays after zulip-term exits, so its last words can be read.
    command = (
        f"cd {work_dir} && env LANG=C.UTF-8 TERM=screen-256color {zulip_term} -c {zuliprc} --debug"
        " 2>>zulip-term-stderr.log;"
        " echo ZT-EXITED $?; sleep 120"
    )
    started = time.time()
    tmux.start(command)
    # The first paint: the streams list and some messages (each content line starts with ▒).
    ok, screen = tmux.wait_for(lambda s: f"# {CHANNEL}" in left(s) and "\u2592 " in middle(s),
                               timeout=40)
    time.sleep(0.5)  # let it settle
    screen = tmux.screen()
    print(f"info zulip-term showed its messages after {time.time() - started:.1f} s", flush=True)
    check("zulip-term is running", "ZT-EXITED" not in screen, screen)
    # It opens on the first unread message, not on the oldest ones (anchor=0).
    check("zulip-term opens on the first unread message (its text is on screen)",
          FIRST_UNREAD in middle(screen), screen)
    check("the oldest message is not on screen at start", OLDEST not in screen, screen)
    # zulip-term may paint the first unread message before the ones above it settle in.
    before_first_unread, screen = tmux.wait_for(
        lambda s: "bulk 489" in middle(s) or "bulk 488" in middle(s), timeout=10)
    check("read messages just before the first unread one are on screen too",
          before_first_unread, "(the screen and zulip-term's message requests follow)")
    if not before_first_unread:
        print("info the screen at start:\n" + screen, flush=True)
        fetched = tail(os.path.join(work_dir, "zulip-terminal-API-requests.log"), 20000)
        print("info zulip-term's message requests:\n" + "\n".join(
            line for line in fetched.splitlines() if "/messages" in line), flush=True)
        again = zulip.Client(email=key["email"], api_key=key["api_key"], site=site).get_messages(
            {"anchor": "first_unread", "num_before": 30, "num_after": 10, "narrow": []})
        print("info the same page asked again: anchor", again.get("anchor"), [
            (m["id"], m["content"][:20], "read" in m["flags"]) for m in again.get("messages", [])],
            flush=True)
    if not ok or "ZT-EXITED" in screen:
        return
    requests_log = tail(os.path.join(work_dir, "zulip-terminal-API-requests.log"), 10000)
    first = [line for line in requests_log.splitlines() if "GET /api/v1/messages?" in line][:1]
    check("zulip-term's first GET /messages is anchor=0 with use_first_unread_anchor=true",
          first and "anchor=0&" in first[0] and "use_first_unread_anchor=true" in first[0], first)
    check("the screen shows the user", "Terminal User" in screen, screen)
    check("the screen shows the channel in the streams list", f"# {CHANNEL}" in left(screen), screen)
    check("the screen shows both topics", TOPIC in screen and OTHER_TOPIC in screen, screen)
    check("the screen shows the unread seeded messages",
          all(t in screen for t in [FIRST_UNREAD, "a message in another topic",
                                    "second seeded message"]), screen)

    # The newest messages are reachable: the focus starts in the left panel; `right` moves it to
    # the messages, `G` (end) to the last one loaded, `j` past it loads the rest (anchor=the
    # last id, num_after=30, which finds the newest), `G` again goes to the newest message.
    tmux.keys("Right")
    time.sleep(0.3)
    tmux.keys("G")
    time.sleep(0.5)
    tmux.keys("j")
    time.sleep(1.0)
    ok, screen = False, ""
    for _ in range(10):
        tmux.keys("G")
        ok, screen = tmux.wait_for(lambda s: NEWEST in middle(s), timeout=1)
        if ok:
            break
        tmux.keys("j")
        time.sleep(0.5)
    check("`G` and `j` reach the newest message (the home view found_newest)", ok, screen)
    # One up: the focus sits mid-screen, so that messages appended below it are in view.
    tmux.keys("k")
    time.sleep(0.5)

    # An event: a message from someone else appears live, within LIVE_LIMIT seconds.
    live = live_sender(work_dir) if live_sender else owner
    sent = time.time()  # from the request: the send, the event, zulip-term's redraw
    res = live.send_message({"type": "stream", "to": CHANNEL, "topic": TOPIC, "content": "live from python"})
    check("the owner sends while zulip-term runs", res["result"] == "success", res)
    ok, screen = tmux.wait_for(lambda s: "live from python" in s, timeout=15, interval=0.05)
    elapsed = time.time() - sent
    print(f"info the live message showed up after {elapsed:.2f} s", flush=True)
    check("a message sent by another user appears live", ok, screen)
    check(f"... within {LIVE_LIMIT:.0f} s", ok and elapsed <= LIVE_LIMIT, f"{elapsed:.2f} s")

    # Find the channel with `q` (search streams, which focuses the left panel), `Enter` focuses
    # it, `t` lists its topics (GET /users/me/{id}/topics), `Enter` narrows to the most recent
    # topic and focuses its messages.
    screens = []
    for _ in range(3):
        tmux.keys("q")
        time.sleep(0.5)
        tmux.keys("terminal", literal=True)
        ok, screen = tmux.wait_for(
            lambda s: "# general" not in left(s) and f"# {BULK_CHANNELS[0]}" not in left(s)
            and f"# {CHANNEL}" in left(s), 5)
        if ok:
            break
        screens.append(screen)
        tmux.keys("Escape")  # leave the search box, then try again
        time.sleep(1)
    check("`q` filters the streams list down to the channel", ok, "\n\n".join(screens))
    if screens and ok:
        print("info `q` needed another try; the screen before:\n" + "\n\n".join(screens))
    tmux.keys("Enter")
    time.sleep(0.5)
    tmux.keys("t")
    ok, screen = tmux.wait_for(lambda s: TOPIC in left(s) and OTHER_TOPIC in left(s), 10)
    check("`t` lists the channel's topics in the left panel", ok, screen)
    tmux.keys("Enter")
    ok, screen = tmux.wait_for(
        lambda s: "live from python" in middle(s) and "a message in another topic" not in middle(s)
        and NEWEST not in middle(s), 10
    )
    check("`Enter` on the topic narrows the messages to it", ok, screen)
    # The narrow opens on the topic's first unread message; the ones zulip-term marked read as
    # its focus passed depend on timing (through a balancer, say). `G` puts the focus on the
    # topic's newest message, the live one, whatever was read.
    tmux.keys("G")
    time.sleep(0.5)

    # Reply to the focused message (the live one, from the owner): `r` opens the compose box
    # with the channel and topic.
    typed = "typed in zulip-term over tmux"
    def stream_compose_open(s):
        return any(line.lstrip("\u2502 ").startswith(f"# {CHANNEL}") and TOPIC in line
                   for line in s.splitlines()[20:])

    opened = compose_and_send(tmux, ["r"], stream_compose_open, typed,
                              "`r` (reply in the channel and topic)")
    if not opened:
        return
    arrived, page = wait_for_message(owner, [{"operator": "channel", "operand": CHANNEL}],
                                     lambda m: typed in m.get("content", ""))
    check("the message typed in zulip-term arrives", arrived is not None, page)
    if arrived:
        check("it is from the terminal user", arrived.get("sender_email") == key["email"], arrived)
        check("in the channel and topic replied to",
              arrived.get("display_recipient") == CHANNEL and arrived.get("subject") == TOPIC, arrived)
    ok, screen = tmux.wait_for(
        lambda s: f"\u2592 {typed}" in s and "ZT-EXITED" not in s, timeout=10
    )
    check("zulip-term shows its own message in the list", ok, screen)
    # zulip-term 0.7.0 keeps the compose box open (and empty) after sending; `Esc` closes it and
    # puts the focus back on the message list.
    tmux.keys("Escape")
    ok, screen = tmux.wait_for(lambda s: not stream_compose_open(s), timeout=5)
    check("`Esc` closes the compose box", ok, screen)

    # Reply privately to the author of the focused message (still the live one): `R` opens a DM
    # compose box to the owner.
    typed_dm = "a DM typed in zulip-term"
    opened = compose_and_send(
        tmux, ["R"], lambda s: f"To: Owner <{owner_email}>" in s, typed_dm, "`R` (reply privately)")
    if opened:
        arrived, page = wait_for_message(
            owner, [{"operator": "dm", "operand": [key["email"]]}],
            lambda m: typed_dm in m.get("content", ""))
        check("the DM typed in zulip-term arrives", arrived is not None, page)
        if arrived:
            recipients = sorted(r.get("email") for r in arrived.get("display_recipient", []))
            check("it is a DM from the terminal user to the owner",
                  arrived.get("type") == "private" and arrived.get("sender_email") == key["email"]
                  and recipients == sorted([key["email"], owner_email]), arrived)
        tmux.keys("Escape")
        ok, screen = tmux.wait_for(lambda s: "To: Owner" not in s, timeout=5)
        check("`Esc` closes the DM compose box", ok, screen)

    # Reactions on the focused message: `+` toggles thumbs_up; `:` opens the emoji picker,
    # "octopus" filters it, `Enter` goes to the results, `Enter` selects, `Esc` applies.
    topic_narrow = [{"operator": "channel", "operand": CHANNEL}, {"operator": "topic", "operand": TOPIC}]

    def reacted(emoji_name):
        return lambda m: any(r.get("emoji_name") == emoji_name and r.get("user_id") == terminal_id
                             for r in m.get("reactions", []))

    tmux.keys("+")
    arrived, page = wait_for_message(owner, topic_narrow, reacted("thumbs_up"), timeout=10)
    check("`+` adds a thumbs_up reaction from the terminal user", arrived is not None, page)
    if arrived:
        check("... to the focused message (the live one)",
              "live from python" in arrived.get("content", ""), arrived)
        check("... with the unicode emoji code 1f44d",
              any(r.get("emoji_code") == "1f44d" and r.get("reaction_type") == "unicode_emoji"
                  for r in arrived.get("reactions", [])), arrived.get("reactions"))
    ok, screen = tmux.wait_for(lambda s: ":thumbs_up: You" in middle(s), timeout=5)
    check("zulip-term shows the reaction (its reaction event)", ok, screen)

    tmux.keys(":")
    # The picker lists thumbs_up first (most used), checked: the user's reaction is known.
    ok, screen = tmux.wait_for(
        lambda s: "Search [p]:" in s and re.search(r"\+1, thumbs_up, like +\u2713 1", s), timeout=5)
    check("`:` opens the emoji picker, thumbs_up checked", ok, screen)
    tmux.keys("octopus", literal=True)
    ok, screen = tmux.wait_for(lambda s: "\u258c octopus " in s and "thumbs_down" not in s, timeout=5)
    check("typing filters the emoji picker", ok, screen)
    tmux.keys("Enter")
    time.sleep(0.3)
    tmux.keys("Enter")
    time.sleep(0.3)
    tmux.keys("Escape")
    arrived, page = wait_for_message(owner, topic_narrow, reacted("octopus"), timeout=10)
    check("the emoji picker adds an octopus reaction from the terminal user", arrived is not None, page)
    if arrived:
        check("... to the focused message, next to the thumbs_up",
              "live from python" in arrived.get("content", "")
              and reacted("thumbs_up")(arrived), arrived)
    ok, screen = tmux.wait_for(
        lambda s: re.search(r":thumbs_up: You +:octopus: You", middle(s)) and "Search [p]:" not in s,
        timeout=5)
    check("zulip-term closes the picker and shows the octopus reaction", ok, screen)

    time.sleep(1)
    screen = tmux.screen()
    check("zulip-term is still running", "ZT-EXITED" not in screen, screen)


def drive(owner, site, zulip_term, live_sender=None):
    """Runs zulip-term against `site` in a tmux of its own and checks what it shows and sends
    (see `run`), then that it wrote no traceback and every API request it made succeeded.
    Returns zulip-term's logs (API requests, debug log) for the caller to print on failure."""
    with tempfile.TemporaryDirectory() as work_dir:
        tmux = Tmux(f"parley-zt-{os.getpid()}")
        try:
            run(owner, site, zulip_term, work_dir, tmux, live_sender)
        except Exception:
            traceback.print_exc()
            check("no exception", False)
        finally:
            stderr_text = tail(os.path.join(work_dir, "zulip-term-stderr.log"), 80)
            if stderr_text.strip():
                print("info zulip-term wrote to stderr:\n" + stderr_text)
            # zulip-term 0.7.0 has a start-up race of its own: its presence thread may call
            # update_screen() before the main loop made its pipe, and dies on an assertion
            # (`assert hasattr(self, "_update_pipe")`); that thread only refreshes the user list.
            errors = [line for line in stderr_text.splitlines()
                      if re.match(r"^[\w.]*(Error|Exception)(:|$)", line)]
            known_race = all(e.strip() == "AssertionError" for e in errors) and "_update_pipe" in stderr_text
            check("zulip-term wrote no traceback to stderr (but its known start-up race)",
                  not errors or known_race, stderr_text)
            tracebacks = tail(os.path.join(work_dir, "zulip-terminal-tracebacks.log"), 80)
            check("zulip-term logged no traceback", not tracebacks.strip(), tracebacks)
            requests_log = tail(os.path.join(work_dir, "zulip-terminal-API-requests.log"), 10000)
            failed = [line for line in requests_log.splitlines()
                      if '" ' in line and "HTTP/1.1\" 2" not in line and "/api/v1/" in line]
            check("every API request zulip-term made succeeded (2xx)", not failed, "\n".join(failed))
            tmux.kill()
            debug_log = tail(os.path.join(work_dir, "debug.log"))
    return requests_log, debug_log


def queue_ids(work_dir):
    """The event queue IDs zulip-term polled, from its API request log, in order."""
    requests_log = tail(os.path.join(work_dir, "zulip-terminal-API-requests.log"), 100000)
    found = []
    for match in re.finditer(r"/api/v1/events\?[^\s\"]*?queue_id=([^&\s\"]+)", requests_log):
        queue_id = urllib.parse.unquote(match.group(1))
        if queue_id not in found:
            found.append(queue_id)
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parley", required=True)
    parser.add_argument("--zulip-term", required=True)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    zulip_term = os.path.abspath(args.zulip_term)

    started = time.time()
    if not shutil.which("tmux"):
        check("tmux is installed", False, "tmux not found")
        return finish("zulip-term")
    with tempfile.TemporaryDirectory() as data_dir, tempfile.TemporaryDirectory() as work_dir:
        port = free_port()
        site = f"http://127.0.0.1:{port}"
        command = [args.parley, "--data-dir", data_dir, "--bind", f"127.0.0.1:{port}"]
        if args.database_url:
            command += ["--database-url", args.database_url]
        env = dict(os.environ, PARLEY_LOG=os.environ.get("PARLEY_LOG", "warn"))
        env.pop("DATABASE_URL", None)
        server_log = os.path.join(work_dir, "parley.log")
        with open(server_log, "wb") as log:
            proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        requests_log, debug_log = "", ""
        try:
            deadline = time.time() + 30
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"parley exited early: {proc.returncode}")
                try:
                    # /health answers once start-up is done (the port is bound before it)
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).close()
                    break
                except OSError:
                    if time.time() > deadline:
                        raise RuntimeError("parley did not start")
                    time.sleep(0.05)
            owner = zulip.Client(config_file=os.path.join(data_dir, "owner.zuliprc"))
            requests_log, debug_log = drive(owner, site, zulip_term)
        except Exception:
            traceback.print_exc()
            check("no exception", False)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            check("parley shuts down cleanly on SIGTERM", proc.returncode == 0, tail(server_log))
            if checks.FAILED:
                print("---- zulip-term API requests (last lines)")
                print("\n".join(requests_log.splitlines()[-30:]))
                print("---- zulip-term debug.log")
                print(debug_log)
                print("---- parley log")
                print(tail(server_log))
    backend = "PostgreSQL" if args.database_url else "SQLite"
    print(f"zulip-term 0.7.0 against parley on {backend} ({time.time() - started:.1f} s):")
    return finish("zulip-term")


if __name__ == "__main__":
    sys.exit(main())
