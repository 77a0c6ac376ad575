# Parley's longer recipes. `just --list` shows them.

pg_url := env_var_or_default("TEST_DATABASE_URL", "postgres://root@127.0.0.1/parley_test")

# List the recipes.
default:
    @just --list

# Start the server on the embedded SQLite database.
run *ARGS:
    cargo run --release -- {{ARGS}}

# Everything CI checks.
ci:
    bash .ci/run

# Formatting, clippy and the crate graph.
lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets -- -D warnings
    bash .ci/check-layers

# Tests on SQLite only.
test:
    cargo test --workspace

# Tests on SQLite and on a fresh PostgreSQL database.
test-postgres:
    psql -U root -d postgres -qc "DROP DATABASE IF EXISTS parley_test"
    psql -U root -d postgres -qc "CREATE DATABASE parley_test"
    TEST_DATABASE_URL={{pg_url}} cargo test --workspace

# The official Python client against the binary: the API, then event queues (call_on_each_event,
# heartbeats, a graceful restart, collected and deleted queues).
python-client:
    cargo build --bin parley
    python3 -m venv target/ci-venv
    target/ci-venv/bin/pip install --quiet zulip
    target/ci-venv/bin/python tests/python/test_python_client.py --parley target/debug/parley
    target/ci-venv/bin/python tests/python/test_python_events.py --parley target/debug/parley

# zulip-term 0.7.0 in tmux against the binary (its own venv; needs tmux).
zulip-term:
    cargo build --bin parley
    python3 -m venv target/ci-venv
    target/ci-venv/bin/pip install --quiet zulip
    python3 -m venv target/zt-venv
    target/zt-venv/bin/pip install --quiet --ignore-requires-python zulip-term==0.7.0 zulip==0.9.1 urwid==2.1.2 urwid-readline==0.15.1 pygments==2.21.0 tzlocal==5.4.5 lxml==6.1.3 beautifulsoup4==4.15.0 python-dateutil==4.0.0
    target/ci-venv/bin/python tests/python/test_zulip_term.py --parley target/debug/parley --zulip-term target/zt-venv/bin/zulip-term

# Benchmarks: message send/read on a seeded history (BENCH_MESSAGES, default 100000) and Markdown.
bench messages="100000":
    BENCH_MESSAGES={{messages}} cargo bench -p parley-tests --bench messages
    cargo bench -p parley-markdown --bench render

# Rebuild the web client's bundle (web/src -> web/dist, committed).
web-build:
    cd web && npm ci --no-audit --no-fund && npm test && npm run build

# The web client in the system's Chromium (Playwright for Python, no browser download).
web-test:
    cargo build --bin parley
    python3 -m venv target/web-venv
    target/web-venv/bin/pip install --quiet playwright==1.65.2
    target/web-venv/bin/python tests/browser/test_web_client.py --parley target/debug/parley

# Web client: compressed bundle size and the first screen of messages with BENCH_MESSAGES (default 100000).
bench-web messages="100000":
    cargo build --release --bin parley
    python3 -m venv target/web-venv
    target/web-venv/bin/pip install --quiet playwright==1.65.2
    target/web-venv/bin/python tests/browser/bench_first_screen.py --parley target/release/parley --messages {{messages}}
# Three nodes on one fresh PostgreSQL database behind HAProxy (rolling restart, kill -9).
cluster:
    cargo build --bin parley
    python3 -m venv target/ci-venv
    target/ci-venv/bin/pip install --quiet zulip
    psql -U root -d postgres -qc "DROP DATABASE IF EXISTS parley_cluster WITH (FORCE)"
    psql -U root -d postgres -qc "CREATE DATABASE parley_cluster"
    target/ci-venv/bin/python tests/python/test_cluster.py --parley target/debug/parley --database-url postgres://root@127.0.0.1/parley_cluster

# send→event latency and sends/s with one and three nodes (needs PostgreSQL).
bench-cluster:
    BENCH_DATABASE_URL={{pg_url}} cargo bench -p parley-tests --bench cluster

# The write path at scale (issue 15), release build: seeds 1,000 users, 100 channels and
# 1,000,000 messages, then measures sends (1 and 8 senders) beside the raw store's single-row
# insert rate, send→event to 1,000 long-polls, register, search and pages. SQLite, then
# PostgreSQL (database `parley_bench_scale` on the server of `pg`, re-created). Figures:
# docs/benchmarks.md.
bench-scale pg="postgres://root@127.0.0.1/postgres":
    cargo bench -p parley-tests --bench scale
    BENCH_DATABASE_URL={{pg}} cargo bench -p parley-tests --bench scale

# The web client and zulip-term on a database the scale benchmark seeded, as its heaviest user:
# unread counts against register, scrolling, live messages, times to the first screen. `url` is
# that database: postgres://root@127.0.0.1/parley_bench_scale or sqlite://target/bench-scale/parley.db
clients-at-scale url:
    cargo build --release --bin parley
    python3 -m venv target/web-venv
    target/web-venv/bin/pip install --quiet playwright==1.65.2
    python3 -m venv target/zt-venv
    target/zt-venv/bin/pip install --quiet --ignore-requires-python zulip-term==0.7.0 zulip==0.9.1 urwid==2.1.2 urwid-readline==0.15.1 pygments==2.21.0 tzlocal==5.4.5 lxml==6.1.3 beautifulsoup4==4.15.0 python-dateutil==4.0.0
    target/web-venv/bin/python tests/load/clients_at_scale.py --parley target/release/parley --database-url {{url}} --zulip-term target/zt-venv/bin/zulip-term
