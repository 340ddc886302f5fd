# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/system/*.sh: fresh minimal Debian systems ("boxes") of
# any release, whatever the host's.
#
# A box is an overlay on a debootstrap minbase of its suite, kept in
# /var/cache/blog-system-test/base/<suite> (made once, again after
# BLOG_PGCHROOT_DAYS days; nothing is ever installed into it), so that
# each box starts as the fresh system debootstrap made and goes, with what
# was installed into it, when it is closed.  Its processes run in a PID
# namespace with its own /proc (Debian's init scripts look for their
# daemons with pidof, which must not see this host's processes), its
# servers in a network namespace of their own (only its loopback): box_ns
# runs a command there, box_host in the host's network (apt-get).
# One box at a time.
. "$(dirname "${BASH_SOURCE[0]}")/../pgversions/lib.sh"   # mirrors, mounts, start_holder

SYSTEST_CACHE=${BLOG_SYSTEST_CACHE:-/var/cache/blog-system-test}

# base_chroot SUITE: the cached minbase of SUITE ready; prints its path.
base_chroot() {
    local suite=$1 dir=$SYSTEST_CACHE/base/$1 new mirror security
    mkdir -p "$SYSTEST_CACHE/base" "$SYSTEST_CACHE/debootstrap"
    (
        flock 9
        if [ -f "$dir/etc/blog-systest-base" ] &&
           [ -z "$(find "$dir/etc/blog-systest-base" -mtime +"$PGCHROOT_DAYS")" ]; then
            exit 0
        fi
        mirror=$(host_mirror) || { echo "no Debian archive in this host's apt sources" >&2; exit 1; }
        security=$(host_security_mirror || true)
        new=$(mktemp -d "$SYSTEST_CACHE/base/.$suite.new.XXXXXX")
        chmod 755 "$new"
        if ! debootstrap --variant=minbase --cache-dir="$SYSTEST_CACHE/debootstrap" \
                "$suite" "$new" "$mirror" >"$new.log" 2>&1; then
            tail -n 20 "$new.log" >&2; rm -rf "$new" "$new.log"; exit 1
        fi
        rm -f "$new.log"
        {
            printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\n' \
                "$mirror" "$suite" "$suite"
            [ -z "$security" ] ||
                printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\n' \
                    "$security" "$suite"
        } >"$new/etc/apt/sources.list.d/debian.sources"
        : >"$new/etc/apt/sources.list"
        # As in any chroot: packages do not start their services on
        # installation (docs/INSTALL.md starts them, which is what a host
        # without systemd needs).
        printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d"
        chmod 755 "$new/usr/sbin/policy-rc.d"
        cp /etc/resolv.conf /etc/hosts /etc/hostname "$new/etc/"
        date -u +%Y-%m-%dT%H:%M:%SZ >"$new/etc/blog-systest-base"
        [ ! -e "$dir" ] || { in_use "$dir" || rm -rf --one-file-system "$dir"; }
        [ ! -e "$dir" ] || mv "$dir" "$(mktemp -d "$SYSTEST_CACHE/base/.$suite.old.XXXXXX")/"
        mv "$new" "$dir"
    ) 9>"$SYSTEST_CACHE/base/.$suite.lock" || return 1
    echo "$dir"
}

box=""          # the box's / (the overlay's merged folder)
box_work=""
box_ns=""
holder=""
holder_job=""

# box_open SUITE NAME: a fresh box of SUITE; sets box.
box_open() {
    local suite=$1 name=$2 lower
    lower=$(base_chroot "$suite") || return 1
    box_work=$(mktemp -d "/var/tmp/blog-$name.XXXXXX")
    mkdir "$box_work/upper" "$box_work/work" "$box_work/root"
    box=$box_work/root
    mount -t overlay overlay \
        -o "lowerdir=$lower,upperdir=$box_work/upper,workdir=$box_work/work" "$box" || return 1
    chmod 755 "$box"     # it becomes /: every user must get through
    mount -t sysfs sysfs "$box/sys"
    mount --bind /dev "$box/dev"
    mount --bind /dev/pts "$box/dev/pts"
    # PostgreSQL's shared memory: a tmpfs of the box's own, not the host's.
    mount -t tmpfs -o mode=1777 shm "$box/dev/shm"
    mkdir -p "$SYSTEST_CACHE/archives/partial"
    mount --bind "$SYSTEST_CACHE/archives" "$box/var/cache/apt/archives"
    box_ns=blog-$name-$$
    start_holder "$box_ns" "$box" || return 1
    box_host chown _apt:root /var/cache/apt/archives/partial
    box_host apt-get update -q >"$box_work/apt-update.log" 2>&1 ||
        { cat "$box_work/apt-update.log"; return 1; }
}

# -r: the holder's root, which is not / when this runs in a chroot itself
# (entering a mount namespace resets the root to the namespace's).
box_enter() {
    nsenter -t "$holder" -p -m -r "$@" chroot "$box" /usr/bin/env -i \
        HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "${cmd[@]}"
}
# Boxes share the downloads (the archives folder), which apt-get locks:
# one box at a time runs its host commands, so that two runs side by side
# wait for each other instead of failing on the lock.
box_host() {
    local cmd=("$@")
    exec 7>"$SYSTEST_CACHE/apt.lock"
    flock 7
    box_enter 7>&-      # nothing it starts keeps the lock
    local rc=$?
    exec 7>&-
    return $rc
}
box_ns() { local cmd=("$@"); box_enter -n; }
# a host's program in the box's network (the checks' curl and load client)
box_net() { nsenter -t "$holder" -n "$@"; }

# box_close: the box's services, processes, namespaces, mounts and files go.
box_close() {
    local svc
    [ -n "$box" ] || return 0
    if [ -n "$holder" ]; then
        for svc in apache2 redis-server postgresql; do
            [ -e "$box/etc/init.d/$svc" ] && box_ns service $svc stop >/dev/null 2>&1
        done
        # The holder is the PID namespace's init: when it ends, the kernel
        # ends every process left in the namespace (only SIGKILL reaches
        # an init that set no handlers).
        kill -KILL "$holder" 2>/dev/null
        wait "$holder_job" 2>/dev/null
        holder=""
    fi
    [ -z "$box_ns" ] || ip netns del "$box_ns" 2>/dev/null
    box_ns=""
    if remove_tree "$box"; then
        rm -rf --one-file-system "$box_work"
    else
        echo "left $box_work: still mounted: $(mounts_under "$box" | tr '\n' ' ')" >&2
    fi
    box=""
}

# box_tree DEST [COMMIT]: this clone, as a clone has it (the tracked files
# and new ones git does not ignore), or COMMIT's tree, copied to DEST in
# the box.
box_tree() {
    local dest=$box$1 commit=${2:-}
    mkdir -p "$dest"
    if [ -n "$commit" ]; then
        git -C "$root" archive "$commit" | tar -C "$dest" -xf -
    elif git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
        (cd "$root" && git ls-files -co --exclude-standard -z |
            tar --null -T - -cf -) | tar -C "$dest" -xf -
    else
        tar -C "$root" --exclude=./var --exclude=./build --exclude=./results \
            --exclude='*.o' --exclude='*.so' --exclude=.libs -cf - . |
            tar -C "$dest" -xf -
    fi
}
