#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The README's quick start as a new user meets it: `./blog run`, `make stop`
# and `./blog check`, as written, in a fresh debootstrap minbase chroot of a
# Debian release (default trixie: Debian 13 and its PostgreSQL 17), and
# each of its sentences about them: what `./blog run` installs and does not,
# where the stack listens and as whom it runs, `make run` twice, `make
# stop`, what `./blog check` installs, prints and stops.
#
#   tests/system/quickstart.sh [--tree DIR] [SUITE]
#
# --tree DIR: the repository to clone in (default: this one; its HEAD, as
# a user's clone has it, with git installed).  The packages come first, in
# the host's network (scripts/deps.sh, what `./blog` calls first, needs the
# archive); then the README's commands run as root in a network namespace
# of their own (only its loopback: the stack's ports meet nothing on this
# host) and a PID namespace with its own /proc.  Inside, no archive is
# reachable, so `./blog check` skips what needs one (pg-versions).  Each
# command's last lines are shown; logs stay in var/quickstart/.  The chroot,
# its mounts, namespaces and processes go at exit, pass or fail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/pgversions/lib.sh"
tree=$root
if [ "${1:-}" = --tree ]; then tree=$(cd "$2" && pwd) || exit 2; shift 2; fi
suite=${1:-trixie}
cache=${BLOG_SYSTEST_CACHE:-/var/cache/blog-system-test}
logs=$root/var/quickstart
npass=0
nfail=0
say() { echo "quickstart: $*"; }
die() { say "$*" >&2; echo "$npass passed, $((nfail + 1)) failed"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount, namespaces)"
for tool in debootstrap ip chroot nsenter unshare python3; do
    command -v $tool >/dev/null || die "$tool missing: sh scripts/deps.sh systest"
done
mirror=$(host_mirror) || die "no Debian archive in this host's apt sources"
mkdir -p "$logs"

chroot_dir=$(mktemp -d /var/tmp/blog-quickstart.XXXXXX)
chmod 755 "$chroot_dir"
ns=blog-qs-$$
holder=""
holder_job=""
enter() { nsenter -t "$holder" -p -m -r "$@" chroot "$chroot_dir" /usr/bin/env -i \
    HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "${cmd[@]}"; }
in_host() { local cmd=("$@"); enter; }
in_ns() { local cmd=("$@"); enter -n; }

cleanup() {
    set +e
    if [ -n "$holder" ]; then
        in_ns sh -c 'cd /root/blog && make stop' >/dev/null 2>&1
        kill -KILL "$holder" 2>/dev/null    # the PID namespace's init: all go
        wait "$holder_job" 2>/dev/null
    fi
    ip netns del "$ns" 2>/dev/null
    remove_tree "$chroot_dir" || say "left $chroot_dir: still mounted"
}
trap cleanup EXIT
trap 'echo "$npass passed, $((nfail + 1)) failed"; exit 130' INT TERM

t0=$(date +%s)
say "debootstrap $suite (minbase) from $mirror"
mkdir -p "$cache/debootstrap" "$cache/archives/partial"
debootstrap --variant=minbase --cache-dir="$cache/debootstrap" "$suite" "$chroot_dir" \
    "$mirror" >"$logs/debootstrap.log" 2>&1 ||
    { tail -n 20 "$logs/debootstrap.log"; die "debootstrap failed"; }
say "debootstrap: $(( $(date +%s) - t0 )) s"

# The chroot's / a mount point, as a system's is (tests/cluster makes its
# mounts rslave).
mount --bind "$chroot_dir" "$chroot_dir"
mount -t sysfs sysfs "$chroot_dir/sys"
mount --bind /dev "$chroot_dir/dev"
mount --bind /dev/pts "$chroot_dir/dev/pts"
mount -t tmpfs -o mode=1777 shm "$chroot_dir/dev/shm"
mount --bind "$cache/archives" "$chroot_dir/var/cache/apt/archives"
cp /etc/resolv.conf /etc/hosts "$chroot_dir/etc/"
printf '#!/bin/sh\nexit 101\n' >"$chroot_dir/usr/sbin/policy-rc.d"
chmod 755 "$chroot_dir/usr/sbin/policy-rc.d"
security=$(host_security_mirror || true)
{
    printf 'Types: deb\nURIs: %s\nSuites: %s' "$mirror" "$suite"
    case $suite in sid|unstable) ;; *) printf ' %s-updates' "$suite" ;; esac
    printf '\nComponents: main\n'
    case $suite in sid|unstable) ;; *)
        [ -z "$security" ] || printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\n' \
            "$security" "$suite" ;;
    esac
} >"$chroot_dir/etc/apt/sources.list.d/debian.sources"
: >"$chroot_dir/etc/apt/sources.list"

start_holder "$ns" "$chroot_dir" || die "could not start the namespace holder"

# The clone, as a user makes it.
git clone -q --no-local "$tree" "$chroot_dir/root/blog" || die "git clone $tree failed"
say "clone of $(git -C "$tree" log -1 --format='%h %s' | cut -c1-60)"

# step NAME WHERE CMD: one command in /root/blog, its log kept
step() {
    local name=$1 where=$2 cmd=$3 t rc
    t=$(date +%s)
    say "$name: $cmd"
    $where sh -c "cd /root/blog && $cmd" >"$logs/$name.log" 2>&1
    rc=$?
    tail -n 4 "$logs/$name.log" | sed 's/^/    | /'
    if [ $rc -eq 0 ]; then
        npass=$((npass + 1)); echo "PASS $name ($(( $(date +%s) - t )) s)"
    else
        nfail=$((nfail + 1)); echo "FAIL $name: exit $rc ($(( $(date +%s) - t )) s; $logs/$name.log)"
    fi
    return $rc
}

# check NAME CMD...: one of the README's sentences
check() {
    local name=$1
    shift
    if "$@"; then npass=$((npass + 1)); echo "PASS $name"
    else nfail=$((nfail + 1)); echo "FAIL $name"; fi
}
installed() { in_host dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
# the processes of the namespace: "name uid" a line (minbase has no procps)
procs() { in_ns sh -c 'for f in /proc/[0-9]*/status; do cat "$f" 2>/dev/null; done |
    awk "/^Name:/ { n = \$2 } /^Uid:/ { print n, \$2 }"'; }
listening() { nsenter -t "$holder" -n ss -Hltn "sport = :$1" | grep -q .; }
runs_as() { procs | grep -q "^$1 $2\$"; }             # runs_as NAME UID
no_stack_left() { ! procs | grep -Eq '^(postgres|redis-server|apache2) '; }
stack_ports="8080 54329 63790"

# apt-get needs the archive: what `./blog run` installs, in the host's
# network (`./blog deps run`: its first half); `./blog run` then finds
# nothing missing.
step packages in_host "apt-get update -q && apt-get install -y -q git && ./blog deps run" ||
    die "the packages did not install"
in_host sh -c 'ls -d /usr/lib/postgresql/*/bin' | sed 's/^/    PostgreSQL: /'
for p in gcc make apache2 redis-server libhiredis-dev curl; do
    check "./blog run installs $p" installed $p
done
pg=$(in_host sh -c 'cd /root/blog && sh scripts/pgmajor.sh')
check "./blog run installs postgresql-$pg" installed postgresql-$pg
for p in wrk valgrind strace; do
    check "./blog run does not install the test tool $p" eval "! installed $p"
done

step run in_ns "./blog run" && curl_ok=1 || curl_ok=0
if [ $curl_ok = 1 ]; then
    step get in_ns "curl -sf -o /tmp/index.html http://127.0.0.1:8080/ && cmp /tmp/index.html tests/golden/index.html"
    for port in $stack_ports; do check "the stack listens on $port" listening $port; done
    check "PostgreSQL's socket in var/run" in_host test -S /root/blog/var/run/.s.PGSQL.54329
    check "PostgreSQL runs as pgblog" runs_as postgres "$(in_host id -u pgblog)"
    check "Apache's children run as www-data" runs_as apache2 33
    check "var is a link to a folder under /var/tmp ($(readlink "$chroot_dir/root/blog/var"))" \
        bash -c "readlink '$chroot_dir/root/blog/var' | grep -q '^/var/tmp/'"
    step run-again in_ns "make run"
    step status in_ns "make status"
fi
step stop in_ns "make stop"
for port in $stack_ports; do check "make stop: nothing listens on $port" eval "! listening $port"; done
check "make stop: no postgres, redis-server or apache2 left" no_stack_left

step deps-check in_host "./blog deps check"
for p in wrk valgrind strace; do check "./blog check installs the test tool $p" installed $p; done
# The chroot's /tmp/blog-load.lock is its own: the host's is held around
# the whole check, so that it does not load the machine beside another load.
lock=${BLOG_LOAD_LOCK-/tmp/blog-load.lock}
if [ -n "$lock" ]; then
    say "waiting for $lock"
    exec 8>"$lock"
    flock 8
fi
step check in_ns "./blog check"
[ -z "$lock" ] || exec 8>&-
grep -E '^(check: FAILED|==== (FAILED|SKIP))|^[0-9]+ passed, [0-9]+ failed' "$logs/check.log" |
    sed 's/^/    /'
check "./blog check prints how long each part took" grep -q '^==== time' "$logs/check.log"
check "./blog check ends with N passed, N failed (then make's error, if any)" \
    bash -c "grep -v '^make: \*\*\* ' '$logs/check.log' | tail -n1 | grep -Eq '^[0-9]+ passed, [0-9]+ failed\$'"
check "./blog check stops what it started" no_stack_left

say "$suite: $(( $(date +%s) - t0 )) s"
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
