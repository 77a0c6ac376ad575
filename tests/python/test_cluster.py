"""Three parley processes on one PostgreSQL database behind HAProxy (round robin), driven through
the balancer with the official Python client and plain HTTP. Checks:

- the Python client works through the balancer: queues land on different nodes, and every
  queue, polled through whichever node the balancer picks (forwarded to the queue's own),
  receives every message exactly once and in order;
- zulip-term (with --zulip-term) through the balancer, driven in tmux as test_zulip_term.py
  drives it against one server: every request it makes goes to whichever node HAProxy picks,
  and the message it must show live is sent through a node other than the one holding its
  event queue;
- a rolling restart of all three nodes (SIGTERM, start again) while clients long-poll and a
  sender sends: no client loses its queue (no BAD_EVENT_QUEUE_ID), and every acknowledged
  message reaches every client exactly once, in order;
- kill -9 of a node during a send storm: every acknowledged message is stored; clients whose
  queue was on the killed node get BAD_EVENT_QUEUE_ID and register again; the others miss
  nothing.
- with --s3-endpoint (an S3-compatible server such as moto's): the nodes keep uploads in one
  fresh bucket (--upload-store s3://...); a file uploaded through the balancer (a small one and
  one larger than a multipart part) downloads through each node, and a node given a bucket that
  does not exist refuses to start, naming it.

With --redis-url the nodes keep their rate limits in that Redis (else in PostgreSQL).

Usage: test_cluster.py --parley PATH --database-url postgres://... [--haproxy PATH]
       [--zulip-term PATH] [--redis-url redis://...] [--s3-endpoint http://127.0.0.1:PORT]
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request

import requests
import zulip

import test_zulip_term
from checks import Server, check, finish, free_port

HEARTBEAT_SECONDS = 2


def wait_until(predicate, timeout, step=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def start_haproxy(haproxy, work, lb_port, ports):
    servers = "\n".join(
        f"    server node{i} 127.0.0.1:{port} check inter 300ms fall 1 rise 2"
        for i, port in enumerate(ports)
    )
    config = f"""
global
    maxconn 1000
defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    retries 3
    option redispatch
    option http-server-close
frontend parley
    bind 127.0.0.1:{lb_port}
    default_backend nodes
backend nodes
    balance roundrobin
    option httpchk GET /health
{servers}
"""
    path = os.path.join(work, "haproxy.cfg")
    with open(path, "w") as f:
        f.write(config)
    log = open(os.path.join(work, "haproxy.log"), "ab")
    proc = subprocess.Popen([haproxy, "-f", path, "-db"], stdout=log, stderr=subprocess.STDOUT)
    ok = wait_until(lambda: health(f"http://127.0.0.1:{lb_port}"), 15)
    if not ok:
        raise RuntimeError("HAProxy did not start")
    return proc


def health(url):
    try:
        urllib.request.urlopen(f"{url}/health", timeout=2).close()
        return True
    except OSError:
        return False


class Poller:
    """A client long-polling its queue through the balancer in a thread, recording message IDs
    in arrival order, and every BAD_EVENT_QUEUE_ID (after which it registers again)."""

    def __init__(self, site, email, key, channel):
        self.site, self.auth, self.channel = site, (email, key), channel
        self.ids = []
        self.lost = 0
        self.errors = []
        self.stop = False
        self.queue_id = None
        self.register()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def register(self):
        while True:
            try:
                r = requests.post(
                    f"{self.site}/api/v1/register",
                    auth=self.auth,
                    data={"event_types": '["message"]'},
                    timeout=30,
                )
                body = r.json()
                if body.get("result") == "success":
                    self.queue_id, self.last = body["queue_id"], -1
                    return
            except (requests.RequestException, ValueError):
                pass
            time.sleep(0.2)

    def run(self):
        while not self.stop:
            try:
                r = requests.get(
                    f"{self.site}/api/v1/events",
                    auth=self.auth,
                    params={"queue_id": self.queue_id, "last_event_id": self.last},
                    timeout=60,
                )
                body = r.json()
            except (requests.RequestException, ValueError) as e:
                self.errors.append(repr(e))
                time.sleep(0.2)
                continue
            if body.get("code") == "BAD_EVENT_QUEUE_ID":
                self.lost += 1
                # Which node answered and when, to tell a lost queue's cause from the logs.
                self.errors.append((time.strftime("%H:%M:%S"), r.headers.get("x-parley-node"),
                                    body.get("msg")))
                self.register()
                continue
            if body.get("result") != "success":
                self.errors.append(body)
                time.sleep(0.2)
                continue
            for event in body["events"]:
                self.last = max(self.last, event["id"])
                if event["type"] == "message":
                    self.ids.append(event["message"]["id"])


class Sender:
    """Sends messages through the balancer in a thread; keeps the IDs acknowledged."""

    def __init__(self, site, email, key, channel, label):
        self.site, self.auth, self.channel, self.label = site, (email, key), channel, label
        self.acked = []
        self.failed = 0
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        n = 0
        while not self.stop:
            n += 1
            try:
                r = requests.post(
                    f"{self.site}/api/v1/messages",
                    auth=self.auth,
                    data={"type": "stream", "to": self.channel, "topic": self.label,
                          "content": f"{self.label} {n}"},
                    timeout=30,
                )
                body = r.json()
                if body.get("result") == "success":
                    self.acked.append(body["id"])
                else:
                    self.failed += 1
            except (requests.RequestException, ValueError):
                self.failed += 1
            time.sleep(0.01)


def node_prefixes(ports, email, key):
    """The node ID each node's queue IDs start with, by port: a queue registered on each node
    directly (and deleted)."""
    prefixes = {}
    for port in ports:
        node = zulip.Client(email=email, api_key=key, site=f"http://127.0.0.1:{port}")
        queue = node.register(event_types=["message"])
        prefixes[queue["queue_id"].split(":")[0]] = port
        node.deregister(queue["queue_id"])
    return prefixes


def zulip_term_through_balancer(zulip_term, site, ports, owner):
    """zulip-term against the balancer; the live message goes through another node than the
    one holding zulip-term's queue."""
    if not shutil.which("tmux"):
        check("tmux is installed (zulip-term through the balancer)", False, "tmux not found")
        return
    prefixes = node_prefixes(ports, owner.email, owner.api_key)
    check("each node gives its queues its own ID", len(prefixes) == len(ports), prefixes)

    def live_sender(work_dir):
        queues = []
        deadline = time.time() + 10
        while not queues and time.time() < deadline:
            queues = test_zulip_term.queue_ids(work_dir)
            time.sleep(0.2)
        home = queues[-1].split(":")[0] if queues else None
        check("zulip-term polls a queue of one of the nodes through the balancer",
              home in prefixes, (queues, prefixes))
        other = next((port for prefix, port in prefixes.items() if prefix != home), ports[0])
        print(f"info zulip-term's queue is on node :{prefixes.get(home)}; the live message goes "
              f"through node :{other}", flush=True)
        return zulip.Client(email=owner.email, api_key=owner.api_key,
                            site=f"http://127.0.0.1:{other}")

    started = time.time()
    requests_log, debug_log = test_zulip_term.drive(owner, site, zulip_term, live_sender)
    print(f"info zulip-term through the balancer took {time.time() - started:.1f} s", flush=True)
    if test_zulip_term.checks.FAILED:
        print("---- zulip-term API requests (last lines)")
        print("\n".join(requests_log.splitlines()[-30:]))
        print("---- zulip-term debug.log")
        print(debug_log)


def create_user(parley, database_url, data_dir, email):
    """A member made with `parley create-user`; returns (email, api_key). Each sender has its
    own account: the API allowance (200 requests a minute) is per user across all nodes."""
    out = subprocess.run(
        [parley, "create-user", "--email", email, "--full-name", email.split("@")[0],
         "--database-url", database_url, "--data-dir", data_dir],
        check=True, capture_output=True, text=True,
    ).stdout
    fields = dict(
        line.split("=", 1) for line in out.splitlines() if "=" in line
    )
    return fields["email"].strip(), fields["key"].strip()


def s3_bucket(endpoint):
    """A fresh bucket on the S3-compatible test server; returns the --upload-store and
    --s3-endpoint arguments of a node using it (under the prefix `cluster`)."""
    bucket = f"parley-cluster-{os.getpid()}-{int(time.time())}"
    r = requests.put(f"{endpoint}/{bucket}", timeout=10)
    r.raise_for_status()
    return ["--upload-store", f"s3://{bucket}/cluster", "--s3-endpoint", endpoint]


def check_uploads_on_every_node(client, site, email, key, ports):
    """Uploads through the balancer, then downloads through each node directly."""
    small = b"uploaded through the balancer\n"
    # Larger than a multipart part (5 MiB): goes up in parts.
    large = bytes((i * 7919 >> 8) & 0xFF for i in range(6 * 1024 * 1024 + 123))
    for name, data in [("small.txt", small), ("large.bin", large)]:
        r = requests.post(f"{site}/api/v1/user_uploads", auth=(email, key),
                          files={"file": (name, data)}, timeout=60).json()
        check(f"{name} uploads through the balancer", r.get("result") == "success", r)
        url = r.get("url", "")
        for i, port in enumerate(ports):
            got = requests.get(f"http://127.0.0.1:{port}{url}", auth=(email, key), timeout=60)
            check(f"{name} downloads through node {i}",
                  got.status_code == 200 and got.content == data,
                  (got.status_code, len(got.content), len(data)))


def check_missing_bucket_refused(parley, database_url, work, endpoint):
    """A node whose bucket does not exist stops at start-up and says which bucket."""
    port = free_port()
    out = subprocess.run(
        [parley, "--data-dir", os.path.join(work, "nobucket"), "--bind", f"127.0.0.1:{port}",
         "--database-url", database_url, "--upload-store", "s3://parley-no-such-bucket",
         "--s3-endpoint", endpoint],
        capture_output=True, text=True, timeout=60,
        env=dict(os.environ, PARLEY_LOG="warn"),
    )
    check("a node with a missing bucket refuses to start, naming it",
          out.returncode != 0 and "s3://parley-no-such-bucket" in out.stderr,
          (out.returncode, out.stderr[-2000:]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parley", required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    parser.add_argument("--zulip-term", help="also drive zulip-term through the balancer")
    parser.add_argument("--redis-url", help="keep the nodes' rate limits in this Redis")
    parser.add_argument("--s3-endpoint", default=None,
                        help="keep uploads in a fresh bucket of this S3-compatible server")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="parley-cluster-")
    lb_port = free_port()
    site = f"http://127.0.0.1:{lb_port}"
    ports = [free_port() for _ in range(3)]
    # This run's own keys: user IDs start again at each run on a fresh database.
    redis_prefix = f"parley-ci:{os.getpid()}:{int(time.time())}:"
    store_args = []
    if args.s3_endpoint:
        args.s3_endpoint = args.s3_endpoint.rstrip("/")
        # moto accepts any credentials; a real deployment gives its own.
        os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
        store_args = s3_bucket(args.s3_endpoint)
    nodes = []
    for i, port in enumerate(ports):
        data = os.path.join(work, f"node{i}")
        nodes.append(Server(
            args.parley, data, port, args.database_url, os.path.join(work, f"node{i}.log"),
            extra_args=["--external-url", site, "--heartbeat-seconds", str(HEARTBEAT_SECONDS),
                        *store_args]
            + (["--redis-url", args.redis_url, "--redis-key-prefix", redis_prefix]
               if args.redis_url else []),
        ))
    haproxy = None
    try:
        # The first start creates the organization; the others find it.
        for node in nodes:
            node.start()
        haproxy = start_haproxy(args.haproxy, work, lb_port, ports)
        client = zulip.Client(config_file=os.path.join(work, "node0", "owner.zuliprc"), site=site)
        email, key = client.email, client.api_key
        result = client.add_subscriptions([{"name": "cluster"}])
        check("the Python client subscribes through the balancer", result["result"] == "success", result)
        if args.s3_endpoint:
            check_uploads_on_every_node(client, site, email, key, ports)
            check_missing_bucket_refused(args.parley, args.database_url, work, args.s3_endpoint)

        # Queues on every node, read through any node.
        queues = [client.register(event_types=["message"]) for _ in range(6)]
        owners = {q["queue_id"].split(":")[0] for q in queues}
        check("queues are spread over the nodes", len(owners) == 3, owners)
        sent = []
        for i in range(30):
            r = client.send_message({"type": "stream", "to": "cluster", "topic": "py", "content": f"m{i}"})
            sent.append(r["id"])
        for q in queues:
            got = []
            last = -1
            deadline = time.time() + 20
            while len(got) < len(sent) and time.time() < deadline:
                r = client.get_events(queue_id=q["queue_id"], last_event_id=last, dont_block=True)
                if r["result"] != "success":
                    break
                for e in r["events"]:
                    last = max(last, e["id"])
                    if e["type"] == "message":
                        got.append(e["message"]["id"])
                time.sleep(0.05)
            check(f"queue on {q['queue_id'].split(':')[0]} gets every message once, in order",
                  got == sent, (got, sent))

        # One allowance across the nodes (kept in Redis or PostgreSQL), not one per node.
        data0 = os.path.join(work, "node0")
        limited = create_user(args.parley, args.database_url, data0, "limited@parley.test")
        allowed, refused = 0, None
        while allowed < 700 and refused is None:
            r = requests.get(f"{site}/api/v1/users/me", auth=limited, timeout=30)
            if r.status_code == 429:
                refused = r.json()
            else:
                allowed += 1
        # In PostgreSQL each node leases ten tokens at a time (docs/configuration.md), so the
        # other nodes may hold up to nine each when one is refused; Redis is exact.
        held = 0 if args.redis_url else 9 * (len(ports) - 1)
        check("the API allowance (200 a minute) is shared by the nodes behind the balancer",
              refused is not None and 200 - held <= allowed <= 260, (allowed, refused))
        check("... refused with RATE_LIMIT_HIT and retry-after",
              refused is not None and refused.get("code") == "RATE_LIMIT_HIT"
              and 0 < refused.get("retry-after", 0) <= 1, refused)
        if args.redis_url and shutil.which("redis-cli"):
            keys = subprocess.run(
                ["redis-cli", "-u", args.redis_url, "--scan", "--pattern", f"{redis_prefix}api:*"],
                capture_output=True, text=True, timeout=30,
            ).stdout.split()
            check("the buckets are in Redis", len(keys) >= 1, keys)

        if args.zulip_term:
            zulip_term_through_balancer(os.path.abspath(args.zulip_term), site, ports, client)

        # A rolling restart with clients connected.
        pollers = [Poller(site, email, key, "cluster") for _ in range(6)]
        rolling = create_user(args.parley, args.database_url, data0, "rolling@parley.test")
        client.add_subscriptions([{"name": "cluster"}], principals=[rolling[0]])
        sender = Sender(site, rolling[0], rolling[1], "cluster", "rolling")
        time.sleep(1)
        for i, node in enumerate(nodes):
            code = node.stop()
            check(f"node {i} stops gracefully", code == 0, node.log_tail())
            time.sleep(0.5)
            node.start()
            wait_until(lambda: health(f"http://127.0.0.1:{ports[i]}"), 10)
            time.sleep(1.5)
        time.sleep(1)
        sender.stop = True
        sender.thread.join()
        acked = list(sender.acked)
        wait_until(lambda: all(set(acked) <= set(p.ids) for p in pollers), 30, 0.2)
        for p in pollers:
            p.stop = True
        check("messages were acknowledged during the rolling restart", len(acked) > 20, len(acked))
        for n, p in enumerate(pollers):
            mine = [i for i in p.ids if i in set(acked)]
            check(f"client {n} kept its queue through the rolling restart", p.lost == 0,
                  (p.lost, p.errors[-3:]))
            check(f"client {n} got every acknowledged message once, in order", mine == acked,
                  (len(mine), len(acked), sorted(set(acked) - set(mine))[:10]))

        # kill -9 during a send storm.
        pollers = [Poller(site, email, key, "cluster") for _ in range(6)]
        # At least one queue on the node to be killed (round robin also spreads the pollers'
        # own requests, so six registrations may miss a node).
        victim_prefix = next((prefix for prefix, port in node_prefixes(ports, email, key).items()
                              if port == ports[1]), None)
        while len(pollers) < 12 and not any(
                (p.queue_id or "").startswith(f"{victim_prefix}:") for p in pollers):
            pollers.append(Poller(site, email, key, "cluster"))
        stormers = [create_user(args.parley, args.database_url, data0, f"storm{i}@parley.test")
                    for i in range(3)]
        client.add_subscriptions([{"name": "cluster"}], principals=[u[0] for u in stormers])
        senders = [Sender(site, u[0], u[1], "cluster", f"storm{i}")
                   for i, u in enumerate(stormers)]
        time.sleep(1.5)
        victim = nodes[1]
        victim_id_prefixes = set()
        os.kill(victim.proc.pid, signal.SIGKILL)
        victim.proc.wait()
        time.sleep(3)
        for s in senders:
            s.stop = True
            s.thread.join()
        acked = sorted(i for s in senders for i in s.acked)
        check("messages were acknowledged around the kill", len(acked) > 20, len(acked))
        stored = set()
        for start in range(0, len(acked), 200):
            chunk = acked[start:start + 200]
            r = requests.get(
                f"{site}/api/v1/messages",
                auth=(email, key),
                params={"anchor": chunk[0], "num_before": 0, "num_after": 1000,
                        "narrow": '[{"operator": "channel", "operand": "cluster"}]'},
                timeout=30,
            ).json()
            stored.update(m["id"] for m in r.get("messages", []))
        check("no acknowledged message is lost when a node is killed",
              set(acked) <= stored, sorted(set(acked) - stored)[:10])
        wait_until(lambda: all(p.lost > 0 or set(acked) <= set(p.ids) for p in pollers), 30, 0.2)
        for p in pollers:
            p.stop = True
        relost = [p for p in pollers if p.lost > 0]
        kept = [p for p in pollers if p.lost == 0]
        check("clients of the killed node were told to register again", len(relost) >= 1,
              [p.lost for p in pollers])
        check("clients of the killed node registered again", all(p.queue_id for p in relost))
        for n, p in enumerate(kept):
            check(f"a client of a live node missed nothing ({n})", set(acked) <= set(p.ids),
                  sorted(set(acked) - set(p.ids))[:10])
    except Exception:
        check("the cluster test ran to the end", False, traceback.format_exc())
    finally:
        for node in nodes:
            if node.proc is not None and node.proc.poll() is None:
                node.stop()
        if haproxy is not None:
            haproxy.terminate()
            haproxy.wait()
    return finish("cluster")


if __name__ == "__main__":
    sys.exit(main())
