#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make pg-versions: pg_blog on every PostgreSQL Debian ships, each in a
# chroot of its own distribution (tests/pgversions/chroot.sh): bookworm (15),
# trixie (17) and sid (18).  In each: build with -Wall -Wextra -Werror,
# install, then as the chroot's postgres user the whole pg_regress suite
# (make installcheck) against two throw-away clusters, one initialised
# without a locale (SQL_ASCII, C) and one in C.UTF-8 (UTF8), and
# test/upgrade.sh.  One PASS or FAIL line per version with the reason, then
# "N passed, N failed".
#
#   tests/pgversions/run.sh [--tree DIR] [SUITE...]
#   tests/pgversions/run.sh --probe [SUITE...]   why it cannot run here
#                                      (exit 77), or nothing (exit 0)
#
# --tree DIR: the checkout whose pg_blog_ext/ to test (default: this one);
# pg_blog_ext/ goes in alone, as a packager who builds only the extension
# has it, its tracked and unignored files only, so that no object built for
# the host goes in.  The cached chroot is never written: each run works in an
# overlay on it, which goes at exit with its mounts, pass or fail.  Logs:
# var/pgversions/<suite>.log.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

# What the test needs, tried: root, debootstrap, the archive, chroot and an
# overlay mount.
probe() {
    [ "$(id -u)" -eq 0 ] || { echo "needs root (debootstrap, chroot, mount)"; return 1; }
    command -v debootstrap >/dev/null || { echo "debootstrap missing (sh scripts/deps.sh systest)"; return 1; }
    host_mirror >/dev/null || { echo "no Debian archive in this host's apt sources"; return 1; }
    # the archive, for each chroot still to be made (debootstrap fetches
    # with wget, which it depends on)
    local suite mirror
    mirror=$(host_mirror)
    for suite in "${suites[@]}"; do
        chroot_ready "$PGCHROOTS/$suite" && continue
        wget -q -T 20 -t 1 --spider "$mirror/dists/$suite/InRelease" ||
            { echo "the archive's $suite is not reachable ($mirror)"; return 1; }
    done
    local t
    t=$(mktemp -d /var/tmp/blog-pgv-probe.XXXXXX) || { echo "mktemp failed"; return 1; }
    mkdir "$t/lower" "$t/upper" "$t/work" "$t/merged"
    if ! mount -t overlay overlay \
            -o "lowerdir=$t/lower,upperdir=$t/upper,workdir=$t/work" "$t/merged" 2>/dev/null; then
        rm -rf "$t"; echo "cannot mount an overlay"; return 1
    fi
    local ok=1
    chroot / true 2>/dev/null || ok=0
    umount "$t/merged"
    rm -rf "$t"
    [ $ok = 1 ] || { echo "chroot not permitted"; return 1; }
}
probe_only=0
if [ "${1:-}" = --probe ]; then probe_only=1; shift; fi
tree=$root
if [ "${1:-}" = --tree ]; then tree=$(cd "$2" && pwd) || exit 2; shift 2; fi
[ $# -gt 0 ] || set -- bookworm trixie sid
suites=("$@")
if [ $probe_only = 1 ]; then
    why=$(probe) && exit 0
    echo "$why"
    exit 77
fi
started=$(date +%s)
why=$(probe) || { echo "pg-versions: cannot run: $why"; echo "0 passed, 1 failed"; exit 1; }

logs=$root/var/pgversions
mkdir -p "$logs"
npass=0
nfail=0
work=""
cleanup() {
    set +e
    if [ -n "$work" ]; then
        remove_tree "$work"
        work=""
    fi
}
trap cleanup EXIT
trap 'echo "pg-versions: interrupted"; exit 130' INT TERM

# The build and the tests, inside the chroot.  $1: the major.
inner='set -eu
major=$1
pgbin=/usr/lib/postgresql/$major/bin
step() { echo "== $*"; }
as_pg() { su postgres -s /bin/sh -c "$*"; }
cd /var/lib/postgresql/blog/pg_blog_ext
step build
as_pg "make PG_CONFIG=$pgbin/pg_config COPT=\"-Wall -Wextra -Werror\""
step install
make -s PG_CONFIG=$pgbin/pg_config install
export PGHOST=/tmp PGPORT=5432 PGUSER=postgres
# cluster NAME INITDB-OPTIONS: a throw-away cluster, the suite against it
cluster() {
    step cluster $1
    rm -rf /tmp/pgdata
    as_pg "$pgbin/initdb -D /tmp/pgdata -A trust -U postgres --no-sync $2 >/tmp/initdb.log"
    as_pg "$pgbin/pg_ctl -D /tmp/pgdata -w -l /tmp/pg.log \
           -o \"-c listen_addresses= -c unix_socket_directories=/tmp -c fsync=off\" start" ||
        { cat /tmp/pg.log; exit 1; }
    as_pg "$pgbin/psql -XAtc \"SELECT getdatabaseencoding(), datcollate FROM pg_database WHERE datname = current_database()\""
    step installcheck $1
    as_pg "PGHOST=/tmp make PG_CONFIG=$pgbin/pg_config installcheck" ||
        { cat regression.diffs 2>/dev/null | head -n 40; exit 1; }
}
# initdb with no locale (C) makes SQL_ASCII; C.UTF-8, UTF8
cluster SQL_ASCII "--no-locale"
step stop
as_pg "$pgbin/pg_ctl -D /tmp/pgdata -w stop -m fast"
cluster UTF8 "--locale=C.UTF-8"
# PostgreSQL 18 on: the library names itself and its version
if [ "$major" -ge 18 ]; then
    step magic
    as_pg "$pgbin/psql -XAt -d contrib_regression -c \"SELECT count(*) FROM blog.index_page(1)\" \
           -c \"SELECT module_name, version FROM pg_get_loaded_modules()\"" >/tmp/modules.out
    cat /tmp/modules.out
    grep -q "^pg_blog|[0-9]" /tmp/modules.out
fi
step upgrade.sh
as_pg "PGHOST=/tmp PG_BINDIR=$pgbin ./test/upgrade.sh" >/tmp/upgrade.out 2>&1 ||
    { cat /tmp/upgrade.out; exit 1; }
cat /tmp/upgrade.out
! grep -q "^pg_dump --schema-only: different" /tmp/upgrade.out
step stop
as_pg "$pgbin/pg_ctl -D /tmp/pgdata -w stop -m fast"
'


# reason LOG: the first thing that went wrong, on one line
reason() {
    local log=$1 stepname line
    stepname=$(sed -n 's/^== //p' "$log" | tail -n1)
    case $stepname in
        build) line=$(grep -m1 -E 'error:|Error [0-9]' "$log") ;;
        installcheck*) line=$(grep -E '^not ok|FAILED|failed \(ignored\)' "$log" |
                             sed -E 's/^not ok +[0-9]+ +[-+] +//; s/ +\.\.\. .*//; s/^test +//; s/ +[0-9]+ ms$//' |
                             tr -s ' ' | paste -sd, -)
                      line="failed: ${line:-see log}" ;;
        upgrade.sh) line=$(grep -m1 -E 'ERROR|different' "$log") ;;
        *) line=$(sed -n "/^== $stepname\$/,\$p" "$log" | sed 1d | grep -v '^make\(\[[0-9]*\]\)\?: ' | head -n1) ;;
    esac
    echo "$stepname: ${line:-see $log}" | cut -c1-300
}

for suite in "$@"; do
    t0=$(date +%s)
    log=$logs/$suite.log
    : >"$log"
    if ! "$here/chroot.sh" "$suite" >>"$log" 2>&1; then
        echo "FAIL $suite: chroot: $(tail -n1 "$log") ($(( $(date +%s) - t0 )) s)"
        nfail=$((nfail + 1)); continue
    fi
    grep '^pgchroot:' "$log" | tail -n1 | sed 's/^/  /'
    lower=$PGCHROOTS/$suite
    major=$(chroot_pg "$lower")
    work=$(mktemp -d /var/tmp/blog-pgv-$suite.XXXXXX)
    mkdir "$work/upper" "$work/work" "$work/merged"
    mount -t overlay overlay \
        -o "lowerdir=$lower,upperdir=$work/upper,workdir=$work/work" "$work/merged"
    m=$work/merged
    mount -t proc proc "$m/proc"
    mount --bind /dev "$m/dev"
    # PostgreSQL's shared memory: a tmpfs of the chroot's own
    mount -t tmpfs -o mode=1777 shm "$m/dev/shm"
    mount -t tmpfs -o mode=1777 tmp "$m/tmp"

    dest=$m/var/lib/postgresql/blog
    mkdir -p "$dest"
    if git -C "$tree" rev-parse --git-dir >/dev/null 2>&1; then
        (cd "$tree" && git ls-files -co --exclude-standard -z -- pg_blog_ext |
            tar --null -T - -cf -) | tar -C "$dest" -xf -
    else
        tar -C "$tree" --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
            --exclude=results --exclude='regression.*' -cf - pg_blog_ext |
            tar -C "$dest" -xf -
    fi
    in_chroot "$m" chown -R postgres: /var/lib/postgresql/blog

    if in_chroot "$m" sh -c "$inner" inner "$major" >>"$log" 2>&1; then
        tests=$(grep -oE 'All [0-9]+ tests passed' "$log" | cut -d' ' -f2 | paste -sd/ -)
        echo "PASS PostgreSQL $major ($suite): build -Werror, installcheck on SQL_ASCII and UTF8 ($tests tests), upgrade.sh ($(( $(date +%s) - t0 )) s)"
        npass=$((npass + 1))
    else
        echo "FAIL PostgreSQL $major ($suite): $(reason "$log") ($(( $(date +%s) - t0 )) s; $log)"
        nfail=$((nfail + 1))
        # a cluster left running by a failed step
        in_chroot "$m" su postgres -s /bin/sh -c \
            "/usr/lib/postgresql/$major/bin/pg_ctl -D /tmp/pgdata -w stop -m immediate" \
            >/dev/null 2>&1
    fi
    cleanup
done

echo "pg-versions: $# versions in $(( $(date +%s) - started )) s"
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
