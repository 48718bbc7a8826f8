#!/usr/bin/env bash
# Miri over the crates with unsafe code. Sizes shrink under cfg(miri) in the tests themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=target/miri
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
cargo +nightly miri setup >/dev/null
cargo +nightly miri test -p locked-queue
cargo +nightly miri test -p ring
