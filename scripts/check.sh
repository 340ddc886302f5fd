#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `make check`: every test, in order of cost.  Each part runs even when an
# earlier one failed; the exit status is non-zero if any failed.  The stack
# this script starts is stopped at the end, pass or fail.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

failed=()
npass=0
nfail=0
log=$(mktemp)
# How long each part took, for the table at the end ("seconds<TAB>name").
t_start=$EPOCHREALTIME
times=()
# (EPOCHREALTIME has the locale's decimal sign)
since() { awk -v a="${1/,/.}" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.1f", b - a }'; }
# part NAME CMD...: a suite that ends with "N passed, N failed" adds its
# counts to the total; any other part counts as one test.
part() {
    local name=$1 rc counts t0=$EPOCHREALTIME
    shift
    echo
    echo "==== $name"
    "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1 || true)
    if [ -n "$counts" ]; then
        npass=$((npass + $(echo "$counts" | cut -d' ' -f1)))
        nfail=$((nfail + $(echo "$counts" | cut -d' ' -f3)))
    elif [ "$rc" -eq 0 ]; then
        npass=$((npass + 1))
    else
        nfail=$((nfail + 1))
    fi
    if [ "$rc" -eq 0 ]; then echo "==== ok: $name"; else failed+=("$name"); echo "==== FAILED: $name"; fi
    times+=("$(since "$t0")"$'\t'"$name")
}

was_running=$(scripts/stack.sh status | grep -c running || true)
cleanup() {
    # Leave a stack that was running before as it was; stop one we started.
    if [ "$was_running" -eq 0 ]; then scripts/stack.sh stop || true; fi
    rm -f "$log"
}
trap cleanup EXIT

part tree tests/tree/refs.sh
# the licence: LICENSE, debian/copyright, META.json, an SPDX line in each file
part licence tests/tree/licence.sh
# the docs and comments say what is: no run number, date, commit or issue
part "no history in docs and comments" python3 tests/tree/history.py
part versions tests/tree/versions.sh
part "log tags" python3 tests/tree/logno.py
part layers python3 tests/tree/layers.py
# the peer's figures in make bench (bench/peer.py), on made-up runs
part "bench: peer figures" python3 tests/bench/peer.py
# the memory step of make bench (bench/memory.py), on made-up runs
part "bench: memory step" python3 tests/bench/memory.py
# the CPU placements bench/sweep.py tries (bench/placement.py)
part "bench: CPU placement" python3 tests/bench/placement.py
# cppcheck: warning, performance and portability findings (none allowed)
part cppcheck tests/tree/cppcheck.sh
part unit make -s -C tests/unit check
part valgrind make -s -C tests/unit valgrind

if scripts/stack.sh start; then
    part pg_regress make -C pg_blog_ext installcheck
    part "start-up errors" python3 tests/e2e/startup.py
    # each role's "cannot" as SQLSTATE 42501 (tests/cluster: on every host)
    part privileges python3 tests/e2e/privileges.py
    # Redis AUTH, an ACL user and forged cache entries (BlogCacheKey), on
    # a Redis and an Apache of the test's own beside the stack
    part "redis AUTH, ACL and BlogCacheKey" python3 tests/e2e/redis_secure.py
    # httpd_as MPM on|off: the stack's Apache restarted with that MPM and
    # BlogFastPath, or its start counted as a failed part (and the parts
    # that need it skipped).
    httpd_as() {
        export BLOG_MPM=$1 BLOG_FASTPATH=$2
        scripts/stack.sh restart httpd && return 0
        part "httpd start ($1, $([ "$2" = on ] && echo quick_handler || echo handler))" false
        return 1
    }
    # Both threaded MPMs (the module assumes none), the default way in:
    # the ordinary content handler.
    for mpm in event worker; do
        hook=handler
        httpd_as $mpm off || continue
        part "e2e ($mpm, $hook)" python3 tests/e2e/run.py
        part "shared mount ($mpm, $hook)" python3 tests/e2e/mount_shared.py
        part "faults ($mpm, $hook)" python3 tests/faults/run.py
        # mod_status figures under a known load, the health check
        # with Redis and PostgreSQL stopped and frozen.
        part "status and health ($mpm, $hook)" python3 tests/e2e/status.py
        part "invalidation ($mpm, $hook)" python3 tests/e2e/invalidation.py
        # The event MPM's own promise: idle keep-alive connections
        # do not cost the busy ones (takes the load lock).
        # On a fresh Apache: the fault suite before it kills a
        # child, restarts Redis and leaves old children draining.
        [ $mpm != event ] ||
            { scripts/stack.sh restart httpd >/dev/null &&
              part "idle connections ($mpm, $hook)" python3 tests/e2e/idle_conns.py; }
    done
    # The quick_handler opt-in (BlogFastPath On), once: the same pages.
    if httpd_as event on; then
        part "e2e (event, quick_handler)" python3 tests/e2e/run.py
        part "shared mount (event, quick_handler)" python3 tests/e2e/mount_shared.py
    fi
    # prefork: no threads, one connection per process; the pages must be
    # the same.
    if httpd_as prefork off; then
        part "e2e (prefork, handler)" python3 tests/e2e/run.py
        part "status and health (prefork, handler)" python3 tests/e2e/status.py
    fi
    unset BLOG_MPM BLOG_FASTPATH
    scripts/stack.sh restart httpd
    # What an Apache admin configures still applies over the mount, and
    # nothing else on the server changes: Apache instances of
    # the suite's own on ports 8150-8154 (BLOG_CITIZEN_PORT), beside the
    # stack's PostgreSQL and Redis.
    for mpm in event worker; do
        part "citizen ($mpm)" python3 tests/e2e/citizen.py --mpm $mpm
    done
else
    failed+=("stack start")
    nfail=$((nfail + 1))
fi

# The scale-out on hosts of its own (tests/cluster): only where this
# machine lets us make network namespaces.
cluster_skip=""
as_root=""
# BLOG_SKIP_CLUSTER=1: several checkouts on one machine share the
# namespaces' names and addresses; only one may run the cluster test.
if [ -n "${BLOG_SKIP_CLUSTER:-}" ]; then
    cluster_skip="BLOG_SKIP_CLUSTER is set"
elif [ "$(id -u)" -ne 0 ]; then
    if sudo -n true 2>/dev/null; then as_root="sudo -n"; else cluster_skip="needs root (or sudo without a password)"; fi
fi
# The probe does what tests/cluster/run.sh does to the system, once: a
# namespace, a bridge and a veth pair in it, and `ip netns exec`, which
# makes / a slave mount in a new mount namespace (what a chroot refuses:
# "mount --make-rslave / failed").  It prints why when a step fails.
cluster_probe() {
    local ns="blog-probe-$$" err rc=0
    command -v ip >/dev/null || { echo "no ip command (iproute2)"; return 1; }
    err=$($as_root ip netns add "$ns" 2>&1) || { echo "ip netns add: $err"; return 1; }
    if ! err=$($as_root ip -n "$ns" link add br0 type bridge 2>&1); then
        echo "a bridge in a namespace: $err"; rc=1
    elif ! err=$($as_root ip -n "$ns" link add v0 type veth peer name v1 2>&1); then
        echo "a veth pair: $err"; rc=1
    elif ! err=$($as_root ip netns exec "$ns" true 2>&1); then
        echo "ip netns exec: $err"; rc=1
    fi
    $as_root ip netns del "$ns" 2>/dev/null
    return $rc
}
if [ -z "$cluster_skip" ] && ! why=$(cluster_probe); then
    cluster_skip="network namespaces do not work here: $(echo "$why" | tr '\n' ' ')"
fi
if [ -z "$cluster_skip" ]; then
    part "cluster (namespaces: standbys, PgBouncer, faults)" $as_root tests/cluster/run.sh
else
    echo
    echo "==== SKIP: cluster test: $cluster_skip"
fi

# pg_blog on every PostgreSQL Debian ships (15, 17, 18), each in a chroot of
# its distribution: where debootstrap, chroot and an overlay work.
pgv_as_root=""
pgv_skip=""
if [ "$(id -u)" -ne 0 ]; then
    if sudo -n true 2>/dev/null; then pgv_as_root="sudo -n"; else pgv_skip="needs root (or sudo without a password)"; fi
fi
if [ -z "$pgv_skip" ]; then
    pgv_skip=$($pgv_as_root tests/pgversions/run.sh --probe) && pgv_skip=""
fi
if [ -z "$pgv_skip" ]; then
    part "pg-versions (PostgreSQL 15, 17, 18 in chroots, each locale once)" \
        $pgv_as_root tests/pgversions/run.sh --fast
else
    echo
    echo "==== SKIP: pg-versions: $pgv_skip"
fi

# The time of each part, the rest (the stack's starts and restarts), the
# total; the counts stay the last line.
echo
echo "==== time"
total=$(since "$t_start")
printf '%s\n' "${times[@]}" | awk -F'\t' -v total="$total" '
    { printf "  %7.1f s  %s\n", $1, $2; sum += $1 }
    END { printf "  %7.1f s  %s\n", total - sum, "the rest (stack starts and restarts)"
          printf "  %7.1f s  total (%d min %02d s)\n", total, total / 60, total % 60 }'
echo
[ ${#failed[@]} -eq 0 ] || printf 'check: FAILED: %s\n' "${failed[@]}"
echo "$npass passed, $nfail failed"
[ ${#failed[@]} -eq 0 ] && [ "$nfail" -eq 0 ]
