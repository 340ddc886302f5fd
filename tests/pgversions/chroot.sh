#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A ready build chroot of one Debian suite with its PostgreSQL: a debootstrap
# minbase with gcc, make, postgresql-NN and postgresql-server-dev-NN (NN: the
# suite's default major, which its "postgresql" package depends on), and the
# locales run.sh makes clusters in (PGCHROOT_LOCALES of lib.sh, by
# locale-gen).
#
#   tests/pgversions/chroot.sh [--fresh] SUITE...    (bookworm trixie sid)
#
# The chroots are kept in /var/cache/blog-pgchroots/<suite> (BLOG_PGCHROOTS)
# and made again when older than BLOG_PGCHROOT_DAYS days (default 7), when
# made by another recipe (lib.sh's PGCHROOT_RECIPE: what it holds), or with
# --fresh; a new one is built beside the old and moved in place, so a user of
# the old one is not disturbed.  Its marker, /etc/blog-pgchroot, says the
# suite, the major, the recipe, and when it was made.  The archive is the one this
# host's apt sources name.  An old chroot that something still has mounted,
# or a process has as its root or folder, is left in place (.SUITE.old.*).
# Needs root and debootstrap.  Users must not
# write into a cached chroot: tests/pgversions/run.sh works in an overlay.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

fresh=0
if [ "${1:-}" = --fresh ]; then fresh=1; shift; fi
[ $# -gt 0 ] || { echo "usage: $0 [--fresh] SUITE..." >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "pgchroot: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null ||
    { echo "pgchroot: debootstrap missing: sh scripts/deps.sh systest" >&2; exit 1; }

mirror=$(host_mirror) || { echo "pgchroot: no Debian archive in this host's apt sources" >&2; exit 1; }
security=$(host_security_mirror || true)
mkdir -p "$PGCHROOTS/.debootstrap" "$PGCHROOTS/.archives/partial"

new=""
cleanup() {
    set +e
    if [ -n "$new" ]; then
        remove_tree "$new"
    fi
}
trap cleanup EXIT

make_one() {
    local suite=$1 dir=$PGCHROOTS/$1 t0 major
    # one maker per suite at a time (several checkouts share the cache);
    # the second finds the first one's chroot ready
    exec 9>"$PGCHROOTS/.$suite.lock"
    flock 9
    if [ $fresh = 0 ] && chroot_ready "$dir" &&
       [ -z "$(find "$dir/etc/blog-pgchroot" -mtime +"$PGCHROOT_DAYS")" ]; then
        echo "pgchroot: $suite: cached ($(sed -n 's/^made=//p' "$dir/etc/blog-pgchroot"))"
        return 0
    fi
    t0=$(date +%s)
    new=$(mktemp -d "$PGCHROOTS/.$suite.new.XXXXXX")
    chmod 755 "$new"
    echo "pgchroot: $suite: debootstrap --variant=minbase from $mirror"
    if ! debootstrap --variant=minbase --cache-dir="$PGCHROOTS/.debootstrap" \
            "$suite" "$new" "$mirror" >"$new.log" 2>&1; then
        tail -n 20 "$new.log"; rm -f "$new.log"
        echo "pgchroot: $suite: debootstrap failed" >&2
        return 1
    fi
    rm -f "$new.log"

    # The host's archive for the suite, its updates and security (not for
    # unstable, which has neither).
    {
        printf 'Types: deb\nURIs: %s\nSuites: %s' "$mirror" "$suite"
        case $suite in sid|unstable) ;; *) printf ' %s-updates' "$suite" ;; esac
        printf '\nComponents: main\n'
        case $suite in
            sid|unstable) ;;
            *) [ -z "$security" ] ||
                printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\n' \
                    "$security" "$suite" ;;
        esac
    } >"$new/etc/apt/sources.list.d/debian.sources"
    : >"$new/etc/apt/sources.list"
    # No service starts on installation, and postgresql-NN makes no
    # "main" cluster: the tests start clusters of their own.
    printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d"
    chmod 755 "$new/usr/sbin/policy-rc.d"
    mkdir -p "$new/etc/postgresql-common"
    echo "create_main_cluster = false" >"$new/etc/postgresql-common/createcluster.conf"
    cp /etc/resolv.conf "$new/etc/"

    # dpkg and the maintainer scripts want /proc and /dev.
    mount -t proc proc "$new/proc"
    mount --bind /dev "$new/dev"
    mount --bind "$PGCHROOTS/.archives" "$new/var/cache/apt/archives"
    # A mirror that is a frozen copy of the archive serves sid's Release
    # past its Valid-Until (a week): say so, and read it all the same.
    in_chroot "$new" apt-get update -q >"$new.log" 2>&1 || true
    if grep -q 'is expired' "$new.log"; then
        echo "pgchroot: $suite: $(grep -m1 -o 'Release file.*expired[^.]*' "$new.log"): using it anyway"
        in_chroot "$new" apt-get update -q -o Acquire::Check-Valid-Until=false >"$new.log" 2>&1
    fi
    grep -q '^E:' "$new.log" && { cat "$new.log"; rm -f "$new.log"; return 1; }
    rm -f "$new.log"
    major=$(in_chroot "$new" apt-cache depends postgresql |
            sed -n 's/^ *Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | head -n1)
    [ -n "$major" ] || { echo "pgchroot: $suite: no postgresql-NN in the archive" >&2; return 1; }
    echo "pgchroot: $suite: installing gcc make locales postgresql-$major postgresql-server-dev-$major"
    if ! in_chroot "$new" apt-get install -y -q --no-install-recommends \
            gcc make libc6-dev locales postgresql-$major postgresql-server-dev-$major \
            >"$new.log" 2>&1; then
        tail -n 20 "$new.log"; rm -f "$new.log"
        echo "pgchroot: $suite: apt-get install failed" >&2
        return 1
    fi
    rm -f "$new.log"
    local loc
    for loc in $PGCHROOT_LOCALES; do
        echo "$loc ${loc#*.}" >>"$new/etc/locale.gen"
    done
    if ! in_chroot "$new" locale-gen >"$new.log" 2>&1; then
        cat "$new.log"; rm -f "$new.log"
        echo "pgchroot: $suite: locale-gen failed" >&2
        return 1
    fi
    rm -f "$new.log"
    in_chroot "$new" apt-get clean
    unmount_under "$new"
    printf 'suite=%s\npg=%s\nrecipe=%s\nmade=%s\n' "$suite" "$major" "$PGCHROOT_RECIPE" \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$new/etc/blog-pgchroot"

    # The new one in place; the old one goes unless someone has it mounted.
    local old=""
    if [ -e "$dir" ]; then
        old=$(mktemp -d "$PGCHROOTS/.$suite.old.XXXXXX")
        mv "$dir" "$old/"
    fi
    mv "$new" "$dir"
    new=""
    if [ -n "$old" ]; then
        if ! in_use "$old"; then rm -rf --one-file-system "$old"
        else echo "pgchroot: $suite: left $old (in use)"; fi
    fi
    echo "pgchroot: $suite: PostgreSQL $major ready in $dir ($(( $(date +%s) - t0 )) s)"
}

rc=0
for suite in "$@"; do
    make_one "$suite" || rc=1
    exec 9>&-
done
exit $rc
