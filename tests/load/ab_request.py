#!/usr/bin/env python3
"""Latency of one request against two (or more) `parley` binaries, alternating, on one
PostgreSQL database the scale benchmark seeded (tests/benches/scale.rs with
BENCH_DATABASE_NAME=scale), as the user with the largest history (user 2).

    tests/load/ab_request.py ROUNDS N METHOD PATH BINARY...     (DB=scale)

Each round starts each binary in turn (one at a time), sends the request N + 3 times over one
keep-alive connection, drops the first 3 and prints the median; at the end, the median and
quartiles over all rounds. The rate-limit buckets are emptied before each start (200 requests
a minute per user). Where tests/load/ab_requests.py times every case a few times, this times
one case many times, for differences smaller than the machine's noise between hours."""
import base64, http.client, os, shutil, statistics, subprocess, sys, tempfile, time

ROUNDS, N, METHOD, PATH = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
BINS = sys.argv[5:]
DB = os.environ.get("DB", "scale")


def psql(sql):
    return subprocess.check_output(["psql", "-h", "127.0.0.1", "-U", "root", "-d", DB, "-Atc", sql]).decode().strip()


auth = "Basic " + base64.b64encode(psql("select delivery_email || ':' || api_key from users where id=2").encode()).decode()
res = {b: [] for b in BINS}
port = 9421
for r in range(ROUNDS):
    for b in BINS:
        psql("DELETE FROM rate_limit_buckets")
        work = tempfile.mkdtemp()
        srv = subprocess.Popen([b, "serve", "--bind", f"127.0.0.1:{port}", "--data-dir", work + "/data",
                                "--database-url", f"postgres://root@127.0.0.1/{DB}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    c = http.client.HTTPConnection("127.0.0.1", port)
                    c.request("GET", "/health")
                    c.getresponse().read()
                    break
                except OSError:
                    time.sleep(0.2)
            c = http.client.HTTPConnection("127.0.0.1", port)
            times = []
            for i in range(N + 3):
                t = time.perf_counter()
                if METHOD == "GET":
                    c.request("GET", PATH, headers={"Authorization": auth})
                else:
                    c.request(METHOD, PATH, body="", headers={
                        "Authorization": auth, "Content-Type": "application/x-www-form-urlencoded"})
                resp = c.getresponse()
                body = resp.read()
                elapsed = (time.perf_counter() - t) * 1000
                if resp.status != 200:
                    print(resp.status, body[:200])
                    break
                if i >= 3:
                    times.append(elapsed)
            res[b] += times
            print(f"round {r} {os.path.basename(b)}: median {statistics.median(times):.2f} ms", flush=True)
        finally:
            srv.terminate()
            srv.wait()
            shutil.rmtree(work, ignore_errors=True)
for b in BINS:
    q = statistics.quantiles(res[b], n=4)
    print(f"{os.path.basename(b)}: median {statistics.median(res[b]):.2f} ms, quartiles {q[0]:.2f} / {q[2]:.2f}, n={len(res[b])}")
