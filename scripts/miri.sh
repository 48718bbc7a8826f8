#!/usr/bin/env bash
# Miri over the crates with unsafe code: each crate's unit tests plus the integration tests
# that drive its unsafe paths, sized for CI (sizes shrink under cfg(miri) in the tests).
# `bash scripts/miri.sh full` runs every test of those crates instead (about 15 minutes), and
# `bash scripts/miri.sh peers` the lab's disruptor adapter alone.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=target/miri
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
cargo +nightly miri setup >/dev/null 2>&1 || cargo +nightly miri setup
miri() { echo "miri: $*"; cargo +nightly miri test "$@"; }
# The lab's peer adapters: the disruptor crate's slots hold bare messages behind an
# `UnsafeCell`. Compiling the lab and its dependencies under Miri takes minutes, so CI leaves
# these out; `bash scripts/miri.sh peers` (or `full`) runs them.
peers() { miri -p lab --test peers_conformance -- disruptor_rs::; }
if [ "${1:-}" = peers ]; then
  peers
  exit 0
fi
if [ "${1:-}" = full ]; then
  miri -p locked-queue -p ring -p reactive -p flight-recorder
  peers
  exit 0
fi
miri -p locked-queue --lib
miri -p locked-queue --test conformance -- fifo_no_loss_p2 close_delivers drops_each bounded_capacity
miri -p ring --lib
miri -p ring --test disruptor
# `blocking::` alone would match `java_blocking::` too (filters match substrings); both are named.
miri -p ring --test conformance -- blocking:: java_blocking::
miri -p reactive --lib
# Sixteen schedules (seeds) of the travelling range: one of them (seed 10) found a lost
# wake-up in the demand handshake that the default schedule passed.
MIRIFLAGS="$MIRIFLAGS -Zmiri-many-seeds=0..16" miri -p reactive --test publish_on -- range_travels a_parked
miri -p flight-recorder --lib
