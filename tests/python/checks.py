"""What the client test scripts share: counted checks, a free port, one parley process, one call
to the API, and the summary line that .ci/run adds up (`<label>: N passed, M failed`)."""

import base64
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

PASSED = 0
FAILED = 0


def check(name, condition, detail=""):
    """Counts and prints one check; a failure prints its detail (shortened)."""
    global PASSED, FAILED
    if condition:
        PASSED += 1
        print(f"ok   {name}", flush=True)
    else:
        FAILED += 1
        detail = str(detail)
        if len(detail) > 6000:
            detail = detail[:6000] + "..."
        print(f"FAIL {name} {detail}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def finish(label):
    """Prints the summary line and returns the exit status: failure when anything failed or
    nothing ran."""
    print(f"{label}: {PASSED} passed, {FAILED} failed", flush=True)
    return 1 if FAILED or not PASSED else 0


def api(site, creds, method, path, data=None):
    """One call to /api/v1 as `creds` (address, API key) with HTTP Basic, for setting up a scene
    rather than what is tested: the answer's JSON, an error's too (its `result` says which)."""
    body = urllib.parse.urlencode(data or {}).encode() if method != "GET" else None
    url = f"{site}/api/v1{path}"
    if method == "GET" and data:
        url += "?" + urllib.parse.urlencode(data)
    req = urllib.request.Request(url, data=body, method=method)
    token = base64.b64encode(f"{creds[0]}:{creds[1]}".encode()).decode()
    req.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.load(e)


class Server:
    """One parley process; start() again on the same data dir and port after stop()."""

    def __init__(self, parley, data_dir, port, database_url, log_path, extra_args=()):
        self.command = [parley, "--data-dir", data_dir, "--bind", f"127.0.0.1:{port}", *extra_args]
        if database_url:
            self.command += ["--database-url", database_url]
        self.port = port
        self.database_url = database_url
        self.log_path = log_path
        self.proc = None

    def start(self):
        env = dict(os.environ, PARLEY_LOG=os.environ.get("PARLEY_LOG", "warn"))
        env.pop("DATABASE_URL", None)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.command, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"parley exited early: {self.proc.returncode}\n{self.log_tail()}")
            try:
                # /health answers once start-up is done (the port is bound before it)
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("parley did not start")

    def stop(self):
        """SIGTERM; returns the exit code (None if it had to be killed)."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None

    def log_tail(self, n=40):
        try:
            with open(self.log_path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-n:]).decode(errors="replace")
        except OSError:
            return ""
