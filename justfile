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

# The official Python client against the binary.
python-client:
    cargo build --bin parley
    python3 -m venv target/ci-venv
    target/ci-venv/bin/pip install --quiet zulip
    target/ci-venv/bin/python tests/python/test_python_client.py --parley target/debug/parley

# Benchmarks: message send/read on a seeded history (BENCH_MESSAGES, default 100000) and Markdown.
bench messages="100000":
    BENCH_MESSAGES={{messages}} cargo bench -p parley-tests --bench messages
    cargo bench -p parley-markdown --bench render
