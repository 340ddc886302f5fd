#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make bench: the fair run of the contract under the event and worker
# MPMs, beside the ceilings and Apache's floor; results in
# results/<date-time>/ (report.md, chart.svg, results.json, raw/) and
# results/latest.  See bench/README.md for the knobs (ENDPOINTS, DURATION,
# WARMUP, RUNS, MPMS, PERF, IDLE, BENCH_BASE, PEER_URL, ...).
#
# The stack is started if it is not running, and the parts this script
# started are stopped at the end; the blog's Apache is left on the event MPM.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
# The fair run writes nothing, and its 16 PostgreSQL connections are the
# pool's: no invalidation listener (BlogInvalidate Off) while it runs.
invalidate=${BLOG_INVALIDATE:-on}
export BLOG_INVALIDATE=off
. "$root/scripts/env.sh"

make -s -C "$here"

# BENCH_BASE=<commit>: that commit's module, built from `git archive` into
# build/, to run beside the tree's (bench.py, BENCH_BASE_SPEC).
if [ -n "${BENCH_BASE:-}" ]; then
    BENCH_BASE=$(git -C "$root" rev-parse --short "$BENCH_BASE^{commit}")
    base_dir=$root/build/base-$BENCH_BASE
    export BENCH_BASE BENCH_BASE_MODULE=$base_dir/mod_blog/.libs/mod_blog.so
    if [ ! -f "$BENCH_BASE_MODULE" ]; then
        rm -rf "$base_dir" && mkdir -p "$base_dir"
        git -C "$root" archive "$BENCH_BASE" mod_blog | tar -x -C "$base_dir"
        make -s -C "$base_dir/mod_blog"
    fi
fi

# The ceilings alone need only PostgreSQL (pgbench).
parts=(pg redis httpd)
[ "${BENCH_ONLY:-}" = ceilings ] && parts=(pg)
started=()
status=$("$root/scripts/stack.sh" status)
for part in "${parts[@]}"; do
    name=$part; [ "$part" = pg ] && name=postgresql
    grep -q "^$name: running" <<<"$status" || started+=("$part")
done
if [ ${#started[@]} -gt 0 ]; then
    echo "bench: starting ${started[*]}"
    BLOG_MPM=event "$root/scripts/stack.sh" start "${started[@]}"
fi

stop_started() {
    if [ ${#started[@]} -gt 0 ]; then
        echo "bench: stopping what it started: ${started[*]}"
        "$root/scripts/stack.sh" stop "${started[@]}" || true
    fi
    # an Apache it found running is left with its invalidation listener
    if [ "${BENCH_ONLY:-}" != ceilings ] && [[ " ${started[*]} " != *" httpd "* ]]; then
        BLOG_INVALIDATE=$invalidate BLOG_MPM=event \
            "$root/scripts/stack.sh" restart httpd >/dev/null || true
    fi
}
trap stop_started EXIT

python3 "$here/bench.py"
