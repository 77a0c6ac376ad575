"""What the client test scripts share: counted checks, a free port, and the summary line that
.ci/run adds up (`<label>: N passed, M failed`)."""

import socket

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
