"""Web client benchmark: the bundle's compressed size, and the time to the first screen of
messages in an organization holding 100,000 messages (BENCH_MESSAGES), in the system's Chromium.

Seeds on SQLite: one real message is sent through the API, then copied in SQL (with its
recipients' rows; the search index follows by its triggers) into N messages over 200 topics, the
newest 300 unread for the owner. Then, signed in as the owner, it loads `/` RUNS times in fresh
browser contexts and reports the time from navigation start until the first message is on screen
(the view opens on the first unread message, `anchor=first_unread`), and GET /json/messages's own
share of it.

Usage: bench_first_screen.py --parley target/release/parley [--messages 100000] [--runs 7]
"""

import argparse
import configparser
import gzip
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from checks import Server, api, free_port  # noqa: E402

from playwright.sync_api import sync_playwright  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def bundle_sizes():
    """Bytes of web/dist/app.js + app.css: raw, gzip -9, and brotli when the module is there."""
    out = {}
    for name in ("app.js", "app.css"):
        with open(os.path.join(ROOT, "web", "dist", name), "rb") as f:
            data = f.read()
        sizes = {"raw": len(data), "gzip": len(gzip.compress(data, 9))}
        try:
            import brotli  # optional

            sizes["brotli"] = len(brotli.compress(data))
        except ImportError:
            pass
        out[name] = sizes
    return out


def seed(db_path, n, owner_id):
    db = sqlite3.connect(db_path)
    template = db.execute("SELECT max(id) FROM messages").fetchone()[0]
    cols = [r[1] for r in db.execute("PRAGMA table_info(messages)")]
    varying = {"id", "topic", "topic_key", "content", "rendered_content", "date_sent"}
    fixed = [c for c in cols if c not in varying]
    recipients = db.execute("SELECT user_id FROM user_messages WHERE message_id = ?", (template,)).fetchall()
    now = int(time.time())
    start = now - n * 30
    rows = []
    for i in range(n):
        topic = f"topic {i % 200}"
        text = f"Seeded message {i} about **{topic}**"
        rows.append((template + 1 + i, topic, topic.lower(), text, f"<p>Seeded message {i} about <strong>{topic}</strong></p>", start + i * 30))
    db.execute("BEGIN")
    db.executemany(
        f"INSERT INTO messages (id, topic, topic_key, content, rendered_content, date_sent, {', '.join(fixed)}) "
        f"SELECT ?, ?, ?, ?, ?, ?, {', '.join(fixed)} FROM messages WHERE id = {template}",
        rows,
    )
    unread_from = template + 1 + n - 300
    um = []
    for (uid,) in recipients:
        for i in range(n):
            mid = template + 1 + i
            um.append((uid, mid, 0 if (uid == owner_id and mid >= unread_from) else 1))
    db.executemany("INSERT INTO user_messages (user_id, message_id, flags) VALUES (?, ?, ?)", um)
    db.commit()
    db.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parley", required=True)
    parser.add_argument("--messages", type=int, default=int(os.environ.get("BENCH_MESSAGES", 100000)))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()

    sizes = bundle_sizes()
    total_gzip = sum(s["gzip"] for s in sizes.values())
    for name, s in sizes.items():
        print(f"bundle {name}: " + ", ".join(f"{k} {v / 1024:.1f} KiB" for k, v in s.items()))
    print(f"bundle total gzip: {total_gzip / 1024:.1f} KiB (budget 200 KB)")

    data_dir = tempfile.mkdtemp(prefix="parley-bench-web-")
    port = free_port()
    site = f"http://127.0.0.1:{port}"
    server = Server(args.parley, data_dir, port, None, os.path.join(data_dir, "parley.log"))
    server.start()
    rc = configparser.ConfigParser()
    rc.read(os.path.join(data_dir, "owner.zuliprc"))
    owner = (rc["api"]["email"], rc["api"]["key"])
    with open(os.path.join(data_dir, "owner-password.txt")) as f:
        password = f.read().strip().splitlines()[0].strip()  # the first line; comments follow
    owner_id = api(site, owner, "GET", "/users/me")["user_id"]
    api(site, owner, "POST", "/users/me/subscriptions", {"subscriptions": json.dumps([{"name": "bench"}])})
    channel_id = api(site, owner, "GET", "/get_stream_id", {"stream": "bench"})["stream_id"]
    api(site, owner, "POST", "/messages", {"type": "stream", "to": channel_id, "topic": "topic 0", "content": "template"})
    server.stop()
    t0 = time.time()
    seed(os.path.join(data_dir, "parley.db"), args.messages, owner_id)
    print(f"seeded {args.messages} messages in {time.time() - t0:.1f} s")
    server.start()

    first_screen = []
    fetch_ms = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"])
            login_ctx = browser.new_context(bypass_csp=True)
            page = login_ctx.new_page()
            page.goto(f"{site}/login/")
            page.fill("input[name=username]", owner[0])
            page.fill("input[name=password]", password)
            page.locator("form [type=submit]").first.click()
            page.wait_for_selector(".message", timeout=30000)
            state = login_ctx.storage_state()
            login_ctx.close()
            for run in range(args.runs + 1):
                ctx = browser.new_context(bypass_csp=True, storage_state=state, viewport={"width": 1280, "height": 800})
                page = ctx.new_page()
                page.goto(f"{site}/#narrow/channel/{channel_id}-bench")
                page.wait_for_selector(".message", timeout=30000)
                page.wait_for_function("performance.getEntriesByName('parley-first-messages').length > 0")
                ms = page.evaluate("performance.getEntriesByName('parley-first-messages')[0].startTime")
                api_ms = page.evaluate(
                    "Math.max(0, ...performance.getEntriesByType('resource')"
                    ".filter(e => e.name.includes('/json/messages?')).map(e => e.duration))"
                )
                if run > 0:  # the first run warms the server's and the browser's caches
                    first_screen.append(ms)
                    fetch_ms.append(api_ms)
                ctx.close()
            browser.close()
    finally:
        server.stop()
    print(f"first screen of messages ({args.messages} messages, {args.runs} runs): "
          f"median {statistics.median(first_screen):.0f} ms, max {max(first_screen):.0f} ms; "
          f"GET /json/messages median {statistics.median(fetch_ms):.0f} ms")
    ok = total_gzip < 200 * 1000 and statistics.median(first_screen) < 1000
    print("bench-web: " + ("within budget" if ok else "OVER BUDGET"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
