# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/pgversions/*.sh and tests/system/*.sh: where the chroots
# are kept, the host's archive, mounts, the namespaces' holder.

PGCHROOTS=${BLOG_PGCHROOTS:-/var/cache/blog-pgchroots}
PGCHROOT_DAYS=${BLOG_PGCHROOT_DAYS:-7}

# The URIs of the host's apt sources, one "URI SUITE" a line, from the
# deb822 files and the one-line ones alike.
host_sources() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk '
            function flush() { if (types ~ /(^| )deb( |$)/ && enabled != "no")
                                   for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
                                       print u[i], s[j]
                               types = ""; enabled = ""; nu = ns = 0 }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            { key = tolower($1); sub(/:$/, "", key); $1 = "" }
            key == "types" { types = $0 }
            key == "enabled" { enabled = tolower($2) }
            key == "uris" { nu = split($0, u, " ") }
            key == "suites" { ns = split($0, s, " ") }
            END { flush() }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        # deb [options] URI SUITE COMPONENT...
        sed -n 's/^[ \t]*deb[ \t]\+\(\[[^]]*\][ \t]\+\)\?\([^ \t]\+\)[ \t]\+\([^ \t]\+\).*/\2 \3/p' "$f"
    done
}

# The archive of a release (a suite without a -security or -updates tail),
# and the security archive.
host_mirror() {
    host_sources | awk '$2 !~ /-/ && $1 ~ /^(https?|file|ftp):/ { print $1; found = 1; exit }
                        END { exit !found }'
}
host_security_mirror() {
    host_sources | awk '$2 ~ /-security$/ { print $1; found = 1; exit } END { exit !found }'
}

# What a chroot holds (chroot.sh): a chroot made by an older recipe is not
# ready, and is made again.
PGCHROOT_RECIPE="postgresql server-dev locales:${PGCHROOT_LOCALES:=tr_TR.UTF-8 de_DE.UTF-8}"
chroot_ready() { grep -qxF "recipe=$PGCHROOT_RECIPE" "$1/etc/blog-pgchroot" 2>/dev/null; }
chroot_pg() { sed -n 's/^pg=//p' "$1/etc/blog-pgchroot"; }

mounts_under() {   # the mount points at or under $1, deepest first
    awk -v r="$1" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}
unmount_under() {
    local m
    for m in $(mounts_under "$1"); do
        umount "$m" 2>/dev/null || umount -l "$m"
    done
}
# remove_tree DIR: unmount what is mounted at or under DIR, then delete it;
# fails, leaving DIR as it is, when something stays mounted there.
remove_tree() {
    unmount_under "$1"
    [ -z "$(mounts_under "$1")" ] || return 1
    rm -rf --one-file-system "$1"
}

# in_chroot DIR CMD...: as root in DIR, with a clean environment.
in_chroot() {
    local dir=$1
    shift
    chroot "$dir" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        DEBIAN_FRONTEND=noninteractive "$@"
}

# in_use DIR: something is mounted under DIR, or a process has its root or
# its folder there
in_use() {
    [ -n "$(mounts_under "$1")" ] && return 0
    local p
    for p in /proc/[0-9]*; do
        case "$(readlink "$p/root" 2>/dev/null)/" in "$1"/*) return 0 ;; esac
        case "$(readlink "$p/cwd" 2>/dev/null)/" in "$1"/*) return 0 ;; esac
    done
    return 1
}

# start_holder NS DIR: a network namespace NS (only its loopback) and, in
# it, a PID and mount namespace with DIR's /proc, held by a process that is
# that namespace's init.  It must reap the daemons' orphans, or a stopped
# Apache stays a zombie and its init script waits for it.  Sets holder (its
# pid, for nsenter) and holder_job (the job that started it, to wait for);
# killing the holder ends every process of the namespace.
start_holder() {
    local ns=$1 dir=$2 p _
    ip netns add "$ns" || return 1
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$ns" unshare --pid --fork --kill-child --mount \
        --mount-proc="$dir/proc" python3 -c 'import os, time
while True:
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(0.2)' 2>/dev/null &
    holder_job=$!
    holder=""
    for _ in $(seq 50); do
        p=$holder_job
        for _ in 1 2 3; do   # the reaper is a descendant of the job
            p=$(pgrep -P "$p" | head -n1)
            [ -n "$p" ] || break
            if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = python3 ]; then
                holder=$p
                return 0
            fi
        done
        sleep 0.1
    done
    return 1
}
