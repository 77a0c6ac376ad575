#!/usr/bin/env python3
"""The web client and zulip-term on the scale benchmark's history, as its heaviest user.

    tests/load/clients_at_scale.py --parley BIN --database-url URL [--chromium PATH] [--zulip-term PATH]

URL is the database the scale benchmark seeded (tests/benches/scale.rs): `postgres://root@127.0.0.1/scale`
or `sqlite:///tmp/bs/parley.db`. The server runs from a temporary data directory on it; the user with the
largest history (user 2: about half of the messages, 100 channels) gets a password through
`parley change-password`; when fewer than 2,500 of its messages are unread (the benchmark ends by marking
everything read), every other one of its newest 5,000 is marked unread first. So it changes that user's
password and unread state, nothing else. Needs Playwright for Python (`target/web-venv`, as `.ci/run` makes it).

What it checks and times, with the browser (Playwright and the system's Chromium):
- signing in through /login/ until the first screen of messages (the client's `parley-first-messages`
  mark), and the response sizes of POST /register and the first GET /messages;
- the sidebar's unread counts (combined feed, mentions, every channel) against POST /register's
  `unread_msgs` read through the API;
- the channel with the most unread messages among those with older history than a first page:
  its messages on screen, older ones loaded by scrolling
  to the top, and a message another user sends there appearing live (time to screen);
And with zulip-term (when given), in tmux: the time until its first screen (streams and messages),
that it did not exit, and a live message appearing.
Exits non-zero when a check fails; prints the timings.
"""

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from checks import Server, api, check, finish, free_port  # noqa: E402

USER_ID = 2
PASSWORD = "scale-password-1"


def query(url, sql):
    """One value from the benchmark's database (psql or the sqlite3 module)."""
    if url.startswith("sqlite://"):
        return sqlite3.connect(url[len("sqlite://"):]).execute(sql).fetchone()[0]
    return subprocess.check_output(["psql", url, "-Atc", sql]).decode().strip()


def expected_counts(site, creds):
    """Unread counts as register reports them: per channel, mentions and the total."""
    state = api(site, creds, "POST", "/register",
                {"fetch_event_types": json.dumps(["message", "update_message_flags", "subscription"])})
    unread = state["unread_msgs"]
    per_channel = {}
    for group in unread["streams"]:
        per_channel[group["stream_id"]] = per_channel.get(group["stream_id"], 0) + len(group["unread_message_ids"])
    total = sum(per_channel.values()) + sum(len(g["unread_message_ids"]) for g in unread["pms"])
    total += sum(len(g["unread_message_ids"]) for g in unread["huddles"])
    names = {s["stream_id"]: s["name"] for s in state["subscriptions"]}
    return per_channel, len(unread["mentions"]), total, names


def ensure_unread(site, creds, wanted=2500):
    """The scale benchmark ends by marking everything read: marks every other one of the user's
    newest messages unread until about `wanted` are."""
    state = api(site, creds, "POST", "/register", {"fetch_event_types": json.dumps(["message", "update_message_flags"])})
    if state["unread_msgs"]["count"] >= wanted:
        return
    ids, anchor = [], "newest"
    while len(ids) < 2 * wanted:
        answer = api(site, creds, "GET", "/messages", {"anchor": anchor, "num_before": 1000, "num_after": 0,
                                                      "narrow": "[]", "apply_markdown": "false"})
        older = [m["id"] for m in answer["messages"] if m["id"] != anchor]
        if not older:
            break
        ids += older
        anchor = older[0]
        if answer["found_oldest"]:
            break
    for i in range(0, len(ids), 2000):
        api(site, creds, "POST", "/messages/flags", {"messages": json.dumps(ids[i:i + 2000:2]),
                                                     "op": "remove", "flag": "read"})


def scrollable_busiest(site, creds, per_channel):
    """The channel with the most unread messages among those with older messages than a first
    screen holds (more than 100 before the first unread one), so that scrolling up has
    something to load: a channel whose unread messages are nearly its whole history (the
    benchmark's CPU-per-send script adds 1,200 to one) shows its oldest message at once."""
    for channel in sorted(per_channel, key=per_channel.get, reverse=True):
        page = api(site, creds, "GET", "/messages", {
            "anchor": "first_unread", "num_before": 100, "num_after": 0,
            "narrow": json.dumps([{"operator": "channel", "operand": channel}])})
        if not page["found_oldest"]:
            return channel
    sys.exit("no channel with unread messages has more than 100 older ones")


def browser_checks(args, site, email, creds, other):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"])
        ctx = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
        page = ctx.new_page()
        page.set_default_timeout(30000)
        sizes = {}

        def on_response(resp):
            for name in ("/json/register", "/json/messages?"):
                if name in resp.url and name not in sizes:
                    try:
                        sizes[name] = len(resp.body())
                    except Exception:
                        pass
        page.on("response", on_response)
        page.goto(f"{site}/login/")
        page.fill("input[name=username]", email)
        page.fill("input[name=password]", PASSWORD)
        started = time.time()
        page.locator("form [type=submit]").first.click()
        page.wait_for_selector(".message")
        page.wait_for_function("performance.getEntriesByName('parley-first-messages').length > 0")
        mark = page.evaluate("performance.getEntriesByName('parley-first-messages')[0].startTime")
        print(f"info web: signed in to the first screen in {time.time() - started:.2f} s "
              f"(the app page's own mark: {mark:.0f} ms); register {sizes.get('/json/register', 0) // 1024} KiB, "
              f"first page {sizes.get('/json/messages?', 0) // 1024} KiB", flush=True)
        check("web: the first screen shows messages", page.locator(".message").count() > 0)

        def count_of(locator):
            badge = locator.locator(".unread-count")
            return int(badge.inner_text()) if badge.count() else 0

        # The first screen marks what it shows as read. The counts are compared on a fresh load
        # of a view with no messages (a new topic), so that nothing is marked read meanwhile.
        page.wait_for_timeout(2000)
        first_channel = min(api(site, creds, "GET", "/users/me/subscriptions")["subscriptions"],
                            key=lambda s: s["stream_id"])["stream_id"]
        page.goto(f"{site}/#narrow/channel/{first_channel}-x/topic/nothing.20here.20{time.time():.0f}")
        page.reload()
        page.wait_for_selector(".nav-list.channels .nav-link")
        page.wait_for_timeout(1000)
        per_channel, mentions, total, names = expected_counts(site, creds)
        print(f"info register: {total} unread, {mentions} mentions, {len(names)} channels", flush=True)
        views = page.locator(".nav-list.views a.nav-link")
        shown_total = count_of(views.filter(has_text="Combined feed"))
        shown_mentions = count_of(views.filter(has_text="Mentions"))
        check("web: the combined feed's unread count is register's", shown_total == total, (shown_total, total))
        check("web: the mentions count is register's", shown_mentions == mentions, (shown_mentions, mentions))
        shown = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll(
            '.nav-list.channels > li > a.nav-link')].map((a) => [
            a.querySelector('.nav-label').textContent.trim().replace(/^(#|🔒)/u, ''),
            Number(a.querySelector('.unread-count')?.textContent || 0)]))""")
        wrong = {name: (shown.get(name), per_channel.get(sid, 0)) for sid, name in names.items()
                 if shown.get(name) != per_channel.get(sid, 0)}
        check(f"web: every channel's unread count is register's ({len(names)} channels)", not wrong, wrong)

        busiest = scrollable_busiest(site, creds, per_channel)
        started = time.time()
        page.goto(f"{site}/#narrow/channel/{busiest}-x")
        page.wait_for_function(
            "(id) => [...document.querySelectorAll('.message')].length > 0 && location.hash.includes(id)",
            arg=str(busiest))
        page.wait_for_timeout(500)
        before = page.locator(".message").count()
        print(f"info web: the busiest channel with older history ({per_channel[busiest]} unread) "
              f"shows {before} messages "
              f"after {time.time() - started:.2f} s", flush=True)
        check("web: the busiest channel shows its messages", before > 0, before)
        loaded = False
        for _ in range(10):
            page.evaluate("document.querySelector('.message-list, .messages, main') && "
                          "(document.querySelector('.message-list, .messages, main').scrollTop = 0)")
            page.locator(".message").first.scroll_into_view_if_needed()
            page.wait_for_timeout(400)
            if page.locator(".message").count() > before:
                loaded = True
                break
        check("web: scrolling to the top loads older messages",
              loaded, (before, page.locator(".message").count()))

        # a view shows new messages once it holds the newest ones: a new topic's view does
        topic = f"live at scale {time.time():.0f}"
        page.goto(f"{site}/#narrow/channel/{busiest}-x/topic/{urllib.parse.quote(topic).replace('%', '.')}")
        page.wait_for_timeout(1000)
        text = f"Live at scale {time.time():.0f}"
        started = time.time()
        api(site, other, "POST", "/messages", {"type": "stream", "to": busiest, "topic": topic, "content": text})
        try:
            page.locator(".message", has_text=text).wait_for(timeout=10000)
            seen = True
        except Exception:
            seen = False
        print(f"info web: a message sent by another user was on screen after {time.time() - started:.2f} s",
              flush=True)
        check("web: a message sent meanwhile appears live", seen)
        browser.close()


def zulip_term_checks(args, site, creds, other, work):
    zuliprc = os.path.join(work, "zuliprc")
    with open(zuliprc, "w") as f:
        f.write(f"[api]\nemail={creds[0]}\nkey={creds[1]}\nsite={site}\n")
    os.chmod(zuliprc, 0o600)
    tmux = ["tmux", "-u", "-L", f"scale-{os.getpid()}", "-f", "/dev/null"]
    command = (f"cd {work} && env LANG=C.UTF-8 TERM=screen-256color {os.path.abspath(args.zulip_term)} -c {zuliprc}"
               " 2>>zulip-term-stderr.log; echo ZT-EXITED $?; sleep 60")

    def screen():
        return subprocess.run(tmux + ["capture-pane", "-p", "-t", "zt"], capture_output=True, text=True).stdout

    def wait(predicate, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            s = screen()
            if predicate(s) or "ZT-EXITED" in s:
                return predicate(s), s
            time.sleep(0.2)
        s = screen()
        return predicate(s), s

    started = time.time()
    subprocess.run(tmux + ["new-session", "-d", "-s", "zt", "-x", "200", "-y", "50", command], check=True)
    try:
        ok, s = wait(lambda s: "# " in s and "\u2592 " in s, 120)
        print(f"info zulip-term: first screen after {time.time() - started:.1f} s", flush=True)
        check("zulip-term: opens with its streams and messages", ok and "ZT-EXITED" not in s, s)
        if not ok:
            return
        # zulip-term opens at the first unread message, far from the newest, so a new message is
        # not at the bottom of its view (as in the web client) until it is scrolled to; what
        # shows it live is the unread count of direct messages in the left panel
        def dm_count(s):
            found = re.search(r"Private messages \[P\]\s+(\d+)", s)
            return int(found.group(1)) if found else 0
        before = dm_count(screen())
        started = time.time()
        api(site, other, "POST", "/messages", {"type": "direct", "to": json.dumps([USER_ID]),
                                               "content": f"zt live at scale {time.time():.0f}"})
        ok, s = wait(lambda s: dm_count(s) == before + 1, 15)
        print(f"info zulip-term: the unread count of direct messages went {before} -> {dm_count(s)} "
              f"after {time.time() - started:.1f} s", flush=True)
        check("zulip-term: a direct message sent meanwhile is counted live", ok, s)
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)
        log = os.path.join(work, "zulip-term-stderr.log")
        if os.path.exists(log) and os.path.getsize(log):
            with open(log) as f:
                print("info zulip-term's stderr:\n" + f.read()[-3000:], flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parley", required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--zulip-term")
    args = parser.parse_args()

    email = query(args.database_url, f"SELECT delivery_email FROM users WHERE id = {USER_ID}")
    creds = (email, query(args.database_url, f"SELECT api_key FROM users WHERE id = {USER_ID}"))
    other_id = query(args.database_url, f"SELECT MIN(id) FROM users WHERE id > {USER_ID} AND is_active AND bot_type IS NULL")
    other = tuple(query(args.database_url, f"SELECT delivery_email || ':' || api_key FROM users WHERE id = {other_id}")
                  .split(":", 1))
    if not args.database_url.startswith("sqlite://"):
        subprocess.run(["psql", args.database_url, "-qc", "DELETE FROM rate_limit_buckets"], check=True)
    work = tempfile.mkdtemp(prefix="parley-scale-clients-")
    subprocess.run([args.parley, "--data-dir", os.path.join(work, "data"), "--database-url", args.database_url,
                    "change-password", "--email", email], input=PASSWORD + "\n", text=True, check=True,
                   capture_output=True)
    port = free_port()
    site = f"http://127.0.0.1:{port}"
    server = Server(args.parley, os.path.join(work, "data"), port, args.database_url,
                    os.path.join(work, "parley.log"))
    server.start()
    try:
        ensure_unread(site, creds)
        browser_checks(args, site, email, creds, other)
        if args.zulip_term:
            zulip_term_checks(args, site, creds, other, work)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return finish("clients at scale")


if __name__ == "__main__":
    sys.exit(main())
