#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make pg-versions: pg_blog on every PostgreSQL Debian ships, each in a
# chroot of its own distribution (tests/pgversions/chroot.sh): bookworm (15),
# trixie (17) and sid (18).  In each: build with -Wall -Wextra -Werror,
# install, then as the chroot's postgres user the whole pg_regress suite
# (make installcheck: its upgrade test updates 1.0, 1.1 and 1.2 to 1.3 in
# databases of the cluster's default, its locale test creates and updates
# the extension in a database of ICU's Turkish) against a throw-away cluster
# of each locale (cells): no locale (SQL_ASCII), C, C.UTF-8, tr_TR.UTF-8
# and de_DE.UTF-8 (libc), and ICU's tr and und (the root locale, the
# collations und-x-icu).  One PASS or FAIL line per cell with the reason,
# then "N passed, N failed".
#
#   tests/pgversions/run.sh [--tree DIR] [--fast] [SUITE...]
#   tests/pgversions/run.sh --probe [SUITE...]   why it cannot run here
#                                      (exit 77), or nothing (exit 0)
#
# --fast (./blog check): each locale on one major only, two or three per
# major (fast_cells), instead of every locale on every major.
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
fast=0
if [ "${1:-}" = --fast ]; then fast=1; shift; fi
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

# The cells: a cluster per locale, by initdb's options.  The libc locales
# are made in the chroot (chroot.sh); ICU's need none (initdb's own locale
# is then C.UTF-8, which only the server's messages and the like use).
all_cells="SQL_ASCII C C.UTF-8 tr_TR.UTF-8 de_DE.UTF-8 icu-tr icu-und"
# --fast: each locale once, spread over the majors (the locale test's ICU
# Turkish database is made in every cell, on every major)
fast_cells() {
    case $1 in
        bookworm) echo "SQL_ASCII tr_TR.UTF-8 icu-und" ;;
        trixie) echo "C.UTF-8 icu-tr" ;;
        *) echo "C de_DE.UTF-8" ;;
    esac
}

# The build and the tests, inside the chroot.  $1: the major, then the
# cells.  "== result CELL PASS|FAIL" after each cell.
inner='set -u
major=$1
shift
pgbin=/usr/lib/postgresql/$major/bin
step() { echo "== $*"; }
as_pg() { su postgres -s /bin/sh -c "$*"; }
initdb_options() {
    case $1 in
        SQL_ASCII) echo "--no-locale" ;;
        C) echo "--locale=C --encoding=UTF8" ;;
        icu-*) echo "--locale=C.UTF-8 --locale-provider=icu --icu-locale=${1#icu-}" ;;
        *) echo "--locale=$1" ;;
    esac
}
cd /var/lib/postgresql/blog/pg_blog_ext
step build
as_pg "make PG_CONFIG=$pgbin/pg_config COPT=\"-Wall -Wextra -Werror\"" || exit 1
step install
make -s PG_CONFIG=$pgbin/pg_config install || exit 1
export PGHOST=/tmp PGPORT=5432 PGUSER=postgres
stop() { as_pg "$pgbin/pg_ctl -D /tmp/pgdata -w stop -m $1" >/dev/null 2>&1; }
# cell NAME: a throw-away cluster of that locale, the suite against it
cell() {
    step cell $1
    rm -rf /tmp/pgdata
    as_pg "$pgbin/initdb -D /tmp/pgdata -A trust -U postgres --no-sync $(initdb_options $1) \
           >/tmp/initdb.log 2>&1" || { cat /tmp/initdb.log; return 1; }
    as_pg "$pgbin/pg_ctl -D /tmp/pgdata -w -l /tmp/pg.log \
           -o \"-c listen_addresses= -c unix_socket_directories=/tmp -c fsync=off\" start" ||
        { cat /tmp/pg.log; return 1; }
    as_pg "$pgbin/psql -XAtc \"SELECT getdatabaseencoding(), datcollate, datctype, datlocprovider
           FROM pg_database WHERE datname = current_database()\"" || return 1
    step installcheck $1
    as_pg "PGHOST=/tmp make PG_CONFIG=$pgbin/pg_config installcheck" ||
        { cat regression.diffs output_iso/regression.diffs 2>/dev/null | head -n 40; return 1; }
    # PostgreSQL 18 on: the library names itself and its version
    if [ "$major" -ge 18 ]; then
        step magic
        as_pg "$pgbin/psql -XAt -d contrib_regression -c \"SELECT count(*) FROM blog.index_page(1)\" \
               -c \"SELECT module_name, version FROM pg_get_loaded_modules()\"" >/tmp/modules.out
        cat /tmp/modules.out
        grep -q "^pg_blog|[0-9]" /tmp/modules.out || return 1
    fi
    stop fast
}
for c in "$@"; do
    if cell $c; then
        echo "== result $c PASS"
    else
        echo "== result $c FAIL"
        stop immediate
    fi
done
'


# reason LOG: the first thing that went wrong, on one line (LOG: a whole
# suite's log, or one cell's part of it)
reason() {
    local log=$1 stepname line
    stepname=$(sed -n 's/^== //p' "$log" | grep -v '^result ' | tail -n1)
    case $stepname in
        build) line=$(grep -m1 -E 'error:|Error [0-9]' "$log") ;;
        installcheck*) line=$(grep -E '^not ok|FAILED|failed \(ignored\)|^ERROR' "$log" |
                             sed -E 's/^not ok +[0-9]+ +[-+] +//; s/ +\.\.\. .*//; s/^test +//; s/ +[0-9]+ ms$//' |
                             tr -s ' ' | paste -sd, -)
                      line="failed: ${line:-see log}" ;;
        *) line=$(sed -n "/^== $stepname\$/,\$p" "$log" | sed 1d | grep -v '^make\(\[[0-9]*\]\)\?: ' | head -n1) ;;
    esac
    echo "$stepname: ${line:-see log}" | cut -c1-300
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

    if [ $fast = 1 ]; then cells=$(fast_cells "$suite"); else cells=$all_cells; fi
    # one cell's part of the log, with the time it took
    in_chroot "$m" sh -c "$inner" inner "$major" $cells 2>&1 |
        while IFS= read -r line; do
            case $line in "== cell "*|"== result "*) line="$line $(date +%s)" ;; esac
            printf '%s\n' "$line"
        done >>"$log"
    if ! grep -q '^== result ' "$log"; then
        echo "FAIL PostgreSQL $major ($suite): $(reason "$log") ($(( $(date +%s) - t0 )) s; $log)"
        nfail=$((nfail + 1))
    fi
    for c in $cells; do
        part=$(sed -n "/^== cell $c [0-9]*\$/,/^== result $c /p" "$log")
        [ -n "$part" ] || continue
        secs=$(( $(echo "$part" | tail -n1 | awk '{print $NF}') - $(echo "$part" | head -n1 | awk '{print $NF}') ))
        if echo "$part" | tail -n1 | grep -q "^== result $c PASS"; then
            tests=$(echo "$part" | grep -oE 'All [0-9]+ tests passed' | cut -d' ' -f2 | paste -sd+ -)
            echo "PASS PostgreSQL $major ($suite) $c: installcheck, $tests tests ($secs s)"
            npass=$((npass + 1))
        else
            echo "$part" | sed '$d' >"$logs/$suite.cell.log"
            echo "FAIL PostgreSQL $major ($suite) $c: $(reason "$logs/$suite.cell.log") ($secs s; $log)"
            rm -f "$logs/$suite.cell.log"
            nfail=$((nfail + 1))
        fi
    done
    cleanup
done

echo "pg-versions: $# versions in $(( $(date +%s) - started )) s"
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
