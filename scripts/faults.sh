#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `make faults` / `make soak`: the whole fault suite (tests/faults/run.py
# --all: the fast cases of `make check` and the long ones) or the soak
# (tests/faults/soak.py) against the private stack.  A stack that was not
# running before is stopped at the end, pass or fail.  Each loaded case
# takes the flock(1) lock $BLOG_LOAD_LOCK (default /tmp/blog-load.lock) so
# that it never overlaps another load test on the machine; set it empty if
# the machine is yours alone (and do not wrap this script in that lock).
#
#   scripts/faults.sh [CASE...]     every case, or the ones named
#   scripts/faults.sh --list        the cases
#   scripts/faults.sh soak
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export BLOG_LOAD_LOCK=${BLOG_LOAD_LOCK-/tmp/blog-load.lock}

if [ "${1:-}" = --list ]; then exec python3 tests/faults/run.py --list; fi
was_running=$(scripts/stack.sh status | grep -c running || true)
cleanup() { if [ "$was_running" -eq 0 ]; then scripts/stack.sh stop || true; fi; }
trap cleanup EXIT
scripts/stack.sh start || exit 1
if [ "${1:-}" = soak ]; then
    python3 tests/faults/soak.py
elif [ $# -gt 0 ]; then
    python3 tests/faults/run.py "$@"
else
    python3 tests/faults/run.py --all
fi
