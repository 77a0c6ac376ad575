#!/usr/bin/env python3
"""Request latency of two (or more) `parley` binaries, alternating, on one database the scale
benchmark seeded (tests/benches/scale.rs with BENCH_DATABASE_NAME=scale).

    tests/load/ab_requests.py ROUNDS BINARY...     (DB=scale, N=11 requests per case)
    DB=/tmp/bs/parley.db tests/load/ab_requests.py ROUNDS BINARY...     (an SQLite database)
    USERS=2,9,500 tests/load/ab_requests.py ROUNDS BINARY...     (these users in turn)
    SEARCH=1 tests/load/ab_requests.py ROUNDS BINARY...     (search pages instead)

Each round starts each binary in turn on the same database (one at a time), sends every case
N + 1 times over one keep-alive connection as each user of USERS (default: the user with the
largest history, user 2; users 3-11 are in 26-27 of the 100 channels, 500 and 900 in fewer),
drops the first and prints the median of the others; at the end, the median over all rounds.
The rate-limit buckets are emptied before each start (200 requests a minute per user; on SQLite
they are in the process's memory). DB names a PostgreSQL database, or an SQLite file by its path."""
import http.client, json, os, shutil, sqlite3, statistics, subprocess, sys, tempfile, time, urllib.parse, base64
ROUNDS = int(sys.argv[1]); BINS = sys.argv[2:]
DB = os.environ.get("DB", "scale"); N = int(os.environ.get("N", "11"))
SQLITE = DB.startswith("/")
URL = f"sqlite://{DB}" if SQLITE else f"postgres://root@127.0.0.1/{DB}"


def query(sql):
    if SQLITE:
        return str(sqlite3.connect(DB).execute(sql).fetchone()[0])
    return subprocess.check_output(["psql", "-h", "127.0.0.1", "-U", "root", "-d", DB, "-Atc", sql]).decode().strip()


USERS = [int(u) for u in os.environ.get("USERS", "2").split(",")]
AUTH = {u: "Basic " + base64.b64encode(query(f"select delivery_email || ':' || api_key from users where id={u}").encode()).decode()
        for u in USERS}
maxid = int(query("select max(id) from messages"))
mid = maxid // 2
CASES = [
  ("own", "GET", "/api/v1/messages?" + urllib.parse.urlencode({"anchor": "newest", "num_before": 100, "num_after": 0, "narrow": "[]"})),
  ("middle", "GET", "/api/v1/messages?" + urllib.parse.urlencode({"anchor": mid, "num_before": 50, "num_after": 50, "narrow": "[]"})),
  ("channel", "GET", "/api/v1/messages?" + urllib.parse.urlencode({"anchor": "newest", "num_before": 100, "num_after": 0, "narrow": json.dumps([["channel", "channel 0"]])})),
  ("unread", "GET", "/api/v1/messages?" + urllib.parse.urlencode({"anchor": "newest", "num_before": 100, "num_after": 0, "narrow": json.dumps([["is", "unread"]])})),
  ("unread-first", "GET", "/api/v1/messages?" + urllib.parse.urlencode({"anchor": "first_unread", "num_before": 50, "num_after": 50, "narrow": json.dumps([["is", "unread"]])})),
  ("first-unread-channel", "GET", "/api/v1/messages?" + urllib.parse.urlencode({"anchor": "first_unread", "num_before": 50, "num_after": 50, "narrow": json.dumps([["channel", "channel 0"]])})),
  ("first-unread-all", "GET", "/api/v1/messages?" + urllib.parse.urlencode({"anchor": "first_unread", "num_before": 50, "num_after": 50, "narrow": "[]"})),
  ("starred", "GET", "/api/v1/messages?" + urllib.parse.urlencode({"anchor": "newest", "num_before": 100, "num_after": 0, "narrow": json.dumps([["is", "starred"]])})),
  ("dm", "GET", "/api/v1/messages?" + urllib.parse.urlencode({"anchor": "newest", "num_before": 100, "num_after": 0, "narrow": json.dumps([["is", "dm"]])})),
  ("followed", "GET", "/api/v1/messages?" + urllib.parse.urlencode({"anchor": "newest", "num_before": 100, "num_after": 0, "narrow": json.dumps([["is", "followed"]])})),
  ("matches-unread", "GET", "/api/v1/messages/matches_narrow?" + urllib.parse.urlencode({"msg_ids": json.dumps([1, 2, 3]), "narrow": json.dumps([["is", "unread"]])})),
  ("register", "POST", "/api/v1/register"),
]
if os.environ.get("SEARCH"):
    # Search pages instead: a common word (in a fifth of the messages) and a word of one message.
    rare = str(maxid // 3)
    page = lambda word, anchor, before, after: "/api/v1/messages?" + urllib.parse.urlencode(
        {"anchor": anchor, "num_before": before, "num_after": after, "narrow": json.dumps([["search", word]])})
    CASES = [
      ("common", "GET", page("meeting", "newest", 100, 0)),
      ("common-middle", "GET", page("meeting", mid, 50, 50)),
      ("rare", "GET", page(rare, "newest", 100, 0)),
      ("rare-middle", "GET", page(rare, mid, 50, 50)),
    ]
res = {(b, u): {c[0]: [] for c in CASES} for b in BINS for u in USERS}
port = 9411
for r in range(ROUNDS):
    for b in BINS:
        if not SQLITE:
            query("DELETE FROM rate_limit_buckets")
        work = tempfile.mkdtemp()
        srv = subprocess.Popen([b, "serve", "--bind", f"127.0.0.1:{port}", "--data-dir", work + "/data",
            "--database-url", URL], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    c = http.client.HTTPConnection("127.0.0.1", port); c.request("GET", "/health"); c.getresponse().read(); break
                except Exception: time.sleep(0.2)
            c = http.client.HTTPConnection("127.0.0.1", port)
            for u, name, method, path in [(u, *case) for u in USERS for case in CASES]:
                auth = AUTH[u]
                for i in range(N + 1):
                    t = time.perf_counter()
                    if method == "GET":
                        c.request("GET", path, headers={"Authorization": auth})
                    else:
                        c.request("POST", path, body="", headers={"Authorization": auth, "Content-Type": "application/x-www-form-urlencoded"})
                    resp = c.getresponse(); body = resp.read()
                    el = (time.perf_counter() - t) * 1000
                    if resp.status != 200: print(name, resp.status, body[:200]); break
                    if i: res[(b, u)][name].append(el)
        finally:
            srv.terminate(); srv.wait(); shutil.rmtree(work, ignore_errors=True)
        for u in USERS:
            print(f"round {r} {os.path.basename(b)} user {u}: " + " ".join(f"{n} {statistics.median(res[(b, u)][n][-N:]):.2f}" for n, _, _ in CASES), flush=True)
for u in USERS:
    for b in BINS:
        print(f"{os.path.basename(b)} user {u}: " + " ".join(f"{n} {statistics.median(res[(b, u)][n]):.2f}" for n, _, _ in CASES))
