#!/usr/bin/env python3
"""A send storm against a running parley: SENDERS threads each send MESSAGES direct messages to
the owner (from owner.zuliprc) and the script reports throughput and latency percentiles.

    python3 tests/load/send_storm.py --zuliprc data/owner.zuliprc --senders 4 --messages 200

Start the server with a per-user limit high enough, or use several zuliprc files (--zuliprc may
repeat: senders take them in turn). Standard library only.
"""

import argparse
import base64
import configparser
import json
import threading
import time
import urllib.parse
import urllib.request


def credentials(path):
    config = configparser.ConfigParser()
    config.read(path)
    api = config["api"]
    token = base64.b64encode(f"{api['email']}:{api['key']}".encode()).decode()
    return api["site"].rstrip("/"), "Basic " + token


def call(site, auth, method, path, fields=None):
    data = urllib.parse.urlencode(fields).encode() if fields is not None else None
    request = urllib.request.Request(site + path, data=data, method=method)
    request.add_header("Authorization", auth)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--zuliprc", action="append", required=True)
    parser.add_argument("--senders", type=int, default=4)
    parser.add_argument("--messages", type=int, default=200, help="per sender")
    args = parser.parse_args()
    accounts = [credentials(path) for path in args.zuliprc]
    latencies, errors, lock = [], [0], threading.Lock()

    def sender(index):
        site, auth = accounts[index % len(accounts)]
        me = call(site, auth, "GET", "/api/v1/users/me")["user_id"]
        for n in range(args.messages):
            fields = {"type": "direct", "to": json.dumps([me]), "content": f"storm {index} {n}"}
            started = time.perf_counter()
            try:
                call(site, auth, "POST", "/api/v1/messages", fields)
            except Exception:  # noqa: BLE001 - counted, not fatal
                with lock:
                    errors[0] += 1
                continue
            with lock:
                latencies.append(time.perf_counter() - started)

    threads = [threading.Thread(target=sender, args=(i,)) for i in range(args.senders)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    latencies.sort()

    def pct(p):
        return latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))] * 1000

    print(
        f"sent {len(latencies)} in {elapsed:.2f}s: {len(latencies) / elapsed:.0f} msg/s, "
        f"p50 {pct(50):.1f} ms, p99 {pct(99):.1f} ms, {errors[0]} errors"
    )


if __name__ == "__main__":
    main()
