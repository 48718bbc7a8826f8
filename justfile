# The lab's recipes. `just ci` is what .ci/run runs (its recipes in order, with the debug
# build removed between the tests and loom).

set shell := ["bash", "-euo", "pipefail", "-c"]

# List the recipes.
default:
    @just --list

# Run the lab in release mode: `just lab disruptor-vs-lbq`, `just lab list`, `just lab run X --messages 1M`.
lab *ARGS:
    cargo build --quiet --release -p lab --bins
    cargo run --quiet --release -p lab --bin lab -- {{ARGS}}

# Build the JVM side (tools/jvm, a Maven project: fetches its pinned libraries from Maven
# Central on first use) into target/jvm, as the lab does on first use.
jvm:
    mvn -B -q -Dstyle.color=never -f tools/jvm/pom.xml -Dlab.jvm.out="$PWD/target/jvm" process-classes

# Install what the tests need (ab, valgrind's dh_view, chromium, Perfetto's trace processor and UI, jsdom, puppeteer-core); idempotent.
setup:
    bash scripts/setup-test-deps.sh

# The test suite (the README's test command): set-up, then every crate's tests.
test: setup
    cargo test --workspace --all-targets
    cargo test --workspace --doc

# Criterion benches (long): every crate's bench_main.
bench *ARGS:
    cargo bench --workspace {{ARGS}}

# Every bench once, as a test, in the optimised bench profile. (`just test` already runs
# each bench once in the test profile through --all-targets, which is what CI relies on.)
bench-smoke:
    cargo bench --workspace -- --test

# Formatting, clippy (warnings as errors), and the code's shape: no import circle between
# sibling modules at any folder depth of lab/src and no import against lib.rs's layers (the
# checker's self-test first), no generic stage naming an experiment, no function over 120
# lines in lab/ or crates/, no Markdown page or source comment naming a repository path
# that does not exist, no row field read by a string name and no role read from a label.
lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets -- -D warnings
    python3 scripts/import-circles.py --self-test
    python3 scripts/import-circles.py
    python3 scripts/long-functions.py lab crates
    python3 scripts/stale-paths.py
    python3 scripts/typed-rows.py --self-test
    python3 scripts/typed-rows.py

# Loom models of the lock-free parts: the ring's sequencers and gating, the flight
# recorder's per-thread ring, the locked queue's wake-up handshake (separate target dir:
# --cfg loom rebuilds everything).
loom: loom-gating loom-rest

# Loom's test binaries built, not run (CI builds them while the other tests run).
loom-build:
    RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p ring --release --test 'loom_*' --no-run
    RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p flight-recorder --release --lib --no-run
    RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p locked-queue --release --test 'loom_*' --no-run

# The longest loom model alone (CI runs it beside the others).
loom-gating:
    RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p ring --release --test loom_gating

# Every loom model but the ring's gating.
loom-rest:
    RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p ring --release --test loom_java_blocking --test loom_multi_producer
    RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p flight-recorder --release --lib loom
    RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p locked-queue --release --test 'loom_*'

# Miri over the crates with unsafe code (nightly; installs the component if missing).
miri:
    bash scripts/miri.sh

# Exactly what CI runs.
ci: lint test loom miri
