#!/bin/bash
# make system-test: the two Debian packages on a fresh Debian of the host's
# release (12 or 13: the packages are built here, for it), installed
# the way docs/INSTALL.md says, as root, without sudo
# and without systemd.
#
#   tests/system/run.sh [DEB_DIR]    (default: build them with `make deb`)
#   tests/system/run.sh --source     the same install from the source instead
#                                    (`./blog install`, then `make uninstall`)
#
# A debootstrap minbase chroot of this host's release (BLOG_SYSTEST_SUITE:
# another) gets the packages' dependencies from the archive named in this
# host's apt sources, a copy of this tree in
# /root/blog (with the packages in build/deb/), and then runs, in order, the
# docs/INSTALL.md's shell blocks marked <!-- system-test --> (or <!-- system-test:
# host -->, and "packages" or "source" for the first step's two ways): the
# marked blocks are the test.  Every server it starts runs in a network
# namespace of its own (only its loopback), so its Apache on port 80,
# PostgreSQL on 5432 and Redis on 6379 meet nothing on this host; blocks
# marked "host" need the archive and run in the host's network (they reach
# PostgreSQL over its unix socket only).  Then: the golden pages from
# Debian's Apache, byte for byte; the Redis cache; a page and the pool's
# connections under the prefork MPM; then `apt-get remove
# libapache2-mod-blog` (or `make uninstall`), and Apache must start and
# serve without the module.
#
# Downloads are kept in /var/cache/blog-system-test between runs; the
# chroot, its mounts, its namespaces and its processes go at exit, pass or
# fail.  Needs root, debootstrap, ip, nsenter, unshare and python3
# (sh scripts/deps.sh systest).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/pgversions/lib.sh"     # host_mirror, host_security_mirror, start_holder
cache=/var/cache/blog-system-test
suite=${BLOG_SYSTEST_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}
npass=0
nfail=0

say() { echo "system-test: $*"; }
die() { say "$*" >&2; echo "$npass passed, $((nfail + 1)) failed"; exit 1; }
ok() { npass=$((npass + 1)); echo "ok: $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL: $*"; }
check() {   # check NAME CMD...: one test
    local name=$1
    shift
    if "$@"; then ok "$name"; else fail "$name"; fi
}

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount, ip netns)"
[ -n "$suite" ] || die "this host's release has no codename (/etc/os-release): set BLOG_SYSTEST_SUITE"
mirror=$(host_mirror) || die "no Debian archive in this host's apt sources"
for tool in debootstrap ip chroot nsenter unshare python3; do
    command -v $tool >/dev/null || die "$tool missing: sh scripts/deps.sh systest"
done

route=packages
if [ "${1:-}" = --source ]; then route=source; shift; fi
deb_dir=${1:-}
if [ $route = source ]; then
    :
elif [ -z "$deb_dir" ]; then
    say "building the packages (make deb)"
    make -s -C "$root" deb >/tmp/blog-system-test-deb.$$.log 2>&1 ||
        { cat /tmp/blog-system-test-deb.$$.log; rm -f /tmp/blog-system-test-deb.$$.log
          die "make deb failed"; }
    rm -f /tmp/blog-system-test-deb.$$.log
    deb_dir=$root/build/deb
fi
if [ $route = packages ]; then
    deb_dir=$(cd "$deb_dir" && pwd)
    ls "$deb_dir"/libapache2-mod-blog_*.deb "$deb_dir"/postgresql-*-pg-blog_*.deb \
        >/dev/null 2>&1 || die "no packages in $deb_dir"
fi

# The man page names every directive the module registers.
missing=$(grep -ho 'AP_INIT_[A-Z0-9]*("Blog[A-Za-z]*"' "$root"/mod_blog/*.c |
          sed 's/.*("//; s/"$//' | sort -u |
          while read -r d; do grep -q "^\.BI\? \"\?$d\b" "$root/man/mod_blog.7" || echo "$d"; done)
check "mod_blog(7) lists every directive${missing:+ (missing: $(echo $missing))}" \
    test -z "$missing"

# `make install` and the packages put the same files in the same places,
# and `make uninstall` removes every file `make install` put there.
stage=$(mktemp -d /tmp/blog-system-stage.XXXXXX)
if [ $route = source ]; then
    :
elif make -s -C "$root" install DESTDIR="$stage" >"$stage.log" 2>&1; then
    (cd "$stage" && find . -type f | sed 's/^\.//' | sort) >"$stage.installed"
    for d in "$deb_dir"/libapache2-mod-blog_*.deb "$deb_dir"/postgresql-*-pg-blog_*.deb; do
        dpkg-deb --fsys-tarfile "$d" | tar -t | sed 's/^\.//' | grep -v '/$'
    done | grep -v '^/usr/share/doc/' | sed 's/\.gz$//' | sort >"$stage.packaged"
    check "make install puts the packages' files (but docs)" \
        diff -u "$stage.packaged" "$stage.installed"
    make -s -C "$root" uninstall DESTDIR="$stage" >>"$stage.log" 2>&1
    check "make uninstall removes what make install put ($(wc -l <"$stage.installed") files)" \
        test -z "$(find "$stage" -type f)"
else
    cat "$stage.log"
    fail "make install DESTDIR=..."
fi
rm -rf "$stage" "$stage".*

chroot_dir=$(mktemp -d /var/tmp/blog-system.XXXXXX)
chmod 755 "$chroot_dir"     # it becomes /: every user must get through
ns=blog-system-$$

# The chroot's processes run in a PID namespace of their own, with its own
# /proc (Debian's init scripts look for their daemons with pidof, which
# must not see this host's processes), and the servers in a network
# namespace of their own.  A reaper process holds the namespaces; the
# commands enter them with nsenter.  in_ns: the private network (the
# servers and the checks); in_host: the host's network (apt-get).  -r: the
# holder's root, which is not / when this test itself runs in a chroot
# (entering a mount namespace resets the root to the namespace's).
holder=""
enter() { nsenter -t "$holder" -p -m -r "$@" chroot "$chroot_dir" /usr/bin/env -i \
    HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "${cmd[@]}"; }
in_host() { local cmd=("$@"); enter; }
in_ns() { local cmd=("$@"); enter -n; }

cleanup() {
    set +e
    if [ -n "$holder" ]; then
        for svc in apache2 redis-server postgresql; do
            [ -e "$chroot_dir/etc/init.d/$svc" ] &&
                in_ns service $svc stop >/dev/null 2>&1
        done
        # The holder is the PID namespace's init: when it ends, the kernel
        # ends every process left in the namespace.  (Only SIGKILL reaches
        # an init that set no handlers.)
        kill -KILL "$holder" 2>/dev/null
        wait "$holder_job" 2>/dev/null
    fi
    ip netns del "$ns" 2>/dev/null
    remove_tree "$chroot_dir" ||
        say "left $chroot_dir: still mounted: $(mounts_under "$chroot_dir" | tr '\n' ' ')"
}
trap cleanup EXIT
trap 'fail "interrupted"; echo "$npass passed, $nfail failed"; exit 130' INT TERM

# ------------------------------------------------------------ the chroot
say "debootstrap $suite (minbase) into $chroot_dir"
mkdir -p "$cache/debootstrap" "$cache/archives/partial"
debootstrap --variant=minbase --cache-dir="$cache/debootstrap" "$suite" \
    "$chroot_dir" "$mirror" >"$chroot_dir.debootstrap.log" 2>&1 ||
    { tail -20 "$chroot_dir.debootstrap.log"; rm -f "$chroot_dir.debootstrap.log"
      die "debootstrap failed"; }
rm -f "$chroot_dir.debootstrap.log"

mount -t sysfs sysfs "$chroot_dir/sys"
mount --bind /dev "$chroot_dir/dev"
mount --bind /dev/pts "$chroot_dir/dev/pts"
# PostgreSQL's shared memory: a tmpfs of the chroot's own, not the host's.
mount -t tmpfs -o mode=1777 shm "$chroot_dir/dev/shm"
mount --bind "$cache/archives" "$chroot_dir/var/cache/apt/archives"
cp /etc/resolv.conf /etc/hosts /etc/hostname "$chroot_dir/etc/"

# The same archive (and updates) as this host, so that the packages built
# here find the versions they were built against.
if [ -f /etc/apt/sources.list.d/debian.sources ] && [ -z "${BLOG_SYSTEST_SUITE:-}" ]; then
    cp /etc/apt/sources.list.d/debian.sources "$chroot_dir/etc/apt/sources.list.d/"
    : >"$chroot_dir/etc/apt/sources.list"
else
    security=$(host_security_mirror || true)
    {
        printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\n' \
            "$mirror" "$suite" "$suite"
        [ -z "$security" ] ||
            printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\n' \
                "$security" "$suite"
    } >"$chroot_dir/etc/apt/sources.list.d/debian.sources"
    : >"$chroot_dir/etc/apt/sources.list"
fi
# As in any chroot: packages do not start their services on installation
# (docs/INSTALL.md starts them, which is what a host without systemd needs).
printf '#!/bin/sh\nexit 101\n' >"$chroot_dir/usr/sbin/policy-rc.d"
chmod 755 "$chroot_dir/usr/sbin/policy-rc.d"

start_holder "$ns" "$chroot_dir" || die "could not start the namespace holder"
in_host chown _apt:root /var/cache/apt/archives/partial

say "apt-get update, curl for the checks"
in_host apt-get update -q >/dev/null || die "apt-get update failed in the chroot"
in_host apt-get install -y -q --no-install-recommends curl ca-certificates >/dev/null ||
    die "apt-get install curl failed"

# A clone under /root, with the packages where `make deb` puts them.
mkdir -p "$chroot_dir/root/blog/build/deb"
# As a clone has it: the tracked files and new ones git does not ignore,
# so that nothing built here goes in.
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$root" && git ls-files -co --exclude-standard -z |
        tar --null -T - -cf -) | tar -C "$chroot_dir/root/blog" -xf -
else
    tar -C "$root" --exclude=./var --exclude=./build --exclude=./results \
        --exclude='*.o' --exclude='*.so' --exclude=.libs -cf - . |
        tar -C "$chroot_dir/root/blog" -xf -
fi
[ $route = source ] || cp "$deb_dir"/*.deb "$chroot_dir/root/blog/build/deb/"
chmod 700 "$chroot_dir/root"

# ------------------------------------------ docs/INSTALL.md's blocks
# Each marked block, in order, as its own script: a block that fails fails
# the test (and the next blocks still run, to show what else breaks).
blocks_dir=$chroot_dir/tmp/readme-blocks
mkdir -p "$blocks_dir"
awk -v dir="$blocks_dir" '
    /^<!-- system-test(: [a-z ]+)? -->$/ {
        mark = ($0 ~ /: host/) ? "host" : "ns"
        if ($0 ~ / packages -->/) mark = mark "-packages"
        if ($0 ~ / source -->/) mark = mark "-source"
        if ($0 ~ / removal -->/) mark = "removal"
        next }
    mark != "" && /^```sh$/ { n++; file = sprintf("%s/%02d-%s.sh", dir, n, mark);
                              print "set -ex" > file; inblock = 1; next }
    inblock && /^```$/ { inblock = 0; mark = ""; close(file); next }
    inblock { print > file; next }
    { mark = "" }
' "$root/docs/INSTALL.md"
nblocks=$(ls "$blocks_dir" | wc -l)
[ "$nblocks" -ge 3 ] || die "found $nblocks marked blocks in docs/INSTALL.md"

for f in "$blocks_dir"/*.sh; do
    name=$(basename "$f" .sh)
    case $name in *-packages|*-source) [ "${name##*-}" = $route ] || continue ;; esac
    case $name in *-removal) continue ;; esac   # after the module's removal
    say "INSTALL.md block $name:"
    sed '1d; s/^/    /' "$f"
    case $name in *-host*) run=in_host ;; *) run=in_ns ;; esac
    if $run sh -c "cd /root/blog && sh /tmp/readme-blocks/$name.sh" \
            >"$blocks_dir/$name.log" 2>&1; then
        grep -v '^+ ' "$blocks_dir/$name.log" | tail -n 3 | sed 's/^/    | /'
        ok "INSTALL.md block $name"
    else
        tail -30 "$blocks_dir/$name.log"
        fail "INSTALL.md block $name"
    fi
done

# ------------------------------------------------------- the checks
page=$chroot_dir/tmp/page
get() {   # get PATH: the body in $page, the status in $blog_status
    rm -f "$page"
    blog_status=$(in_ns curl -s -o /tmp/page -w '%{http_code}' "http://127.0.0.1$1")
}

check "mod_blog loaded" in_ns sh -c 'apache2ctl -M 2>/dev/null | grep -q blog_module'
check "nothing listens on port 80 of this host" \
    bash -c "! ss -Hltn 'sport = :80' | grep -q ."
say "the golden pages from Debian's Apache"
while read -r status path file sum; do
    [ -n "$status" ] || continue
    get "$path"
    body=$(sha256sum <"$page" 2>/dev/null | cut -d' ' -f1)
    if [ "$blog_status" = "$status" ] && [ "$body" = "$sum" ] &&
       cmp -s "$page" "$root/tests/golden/$file"; then
        ok "GET $path: $status, $file byte-identical"
    else
        fail "GET $path: status $blog_status (want $status), sha256 $body"
    fi
done <"$root/tests/golden/MANIFEST"

check "installcheck-system left no contrib_regression" \
    test "$(in_ns su - postgres -c "psql -XAtc \"SELECT count(*) FROM pg_database WHERE datname = 'contrib_regression'\"")" = 0

hdr() { in_ns curl -s -D - -o /dev/null "http://127.0.0.1$1" | tr -d '\r' |
        sed -n 's/^X-Cache: //Ip'; }
first=$(hdr /post/post-2/cached)
second=$(hdr /post/post-2/cached)
check "Redis page cache: MISS then HIT ($first, $second)" \
    test "$first:$second" = "MISS:HIT"

# ------------------------------------------------------------- prefork
# What Debian switches Apache to when mod_php comes: one request per child,
# so a child should hold one connection (BlogPoolMin), not a thread pool's.
say "the prefork MPM"
if in_ns sh -c 'a2dismod -q mpm_event && a2enmod -q mpm_prefork &&
                service apache2 restart' >"$blocks_dir/prefork.log" 2>&1; then
    get /post/post-31
    check "prefork: GET /post/post-31 byte-identical ($blog_status)" \
        cmp -s "$page" "$root/tests/golden/post-31.html"
    sleep 2
    # (no procps in minbase: the children are apache2 processes of www-data)
    children=$(in_ns sh -c 'for f in /proc/[0-9]*/status; do cat "$f" 2>/dev/null; done |
        awk "/^Name:/ { n = \$2 } /^Uid:/ { if (n == \"apache2\" && \$2 == 33) c++ }
             END { print c + 0 }"')
    conns=$(in_ns su - postgres -c "psql -XAtc \"SELECT count(*) FROM pg_stat_activity
                                   WHERE application_name = 'mod_blog'\"")
    check "prefork: $children children hold $conns connections (one each)" \
        test "$children" -gt 0 -a "$conns" -eq "$children"
else
    tail -20 "$blocks_dir/prefork.log"
    fail "prefork: a2enmod mpm_prefork, restart"
fi
in_ns sh -c 'a2dismod -q mpm_prefork && a2enmod -q mpm_event &&
             service apache2 restart' >>"$blocks_dir/prefork.log" 2>&1 ||
    fail "back to the event MPM"

# ---------------------------------------------- removing the module
if [ $route = packages ]; then
    say "apt-get remove libapache2-mod-blog"
    if in_ns apt-get remove -y -q libapache2-mod-blog >"$blocks_dir/remove.log" 2>&1; then
        ok "apt-get remove libapache2-mod-blog"
    else
        tail -20 "$blocks_dir/remove.log"
        fail "apt-get remove libapache2-mod-blog"
    fi
else
    # ./blog install: the runtime and build sets only
    for tool in wrk valgrind gnuplot-nox strace; do
        if in_host dpkg-query -W -f='${Status}' $tool 2>/dev/null | grep -q 'ok installed'; then
            fail "./blog install installed the test tool $tool"
        else
            ok "./blog install did not install the test tool $tool"
        fi
    done
    say "make uninstall"
    if in_ns sh -c 'cd /root/blog && make uninstall' >"$blocks_dir/remove.log" 2>&1; then
        ok "make uninstall"
    else
        tail -20 "$blocks_dir/remove.log"
        fail "make uninstall"
    fi
    pg=$(in_ns sh -c 'cd /root/blog && sh scripts/pgmajor.sh')
    for f in /usr/lib/apache2/modules/mod_blog.so /etc/apache2/mods-available/blog.load \
             /etc/apache2/mods-available/blog.conf /usr/share/mod_blog \
             /usr/share/postgresql/$pg/extension/pg_blog.control /usr/lib/postgresql/$pg/lib/pg_blog.so; do
        check "make uninstall removed $f" test ! -e "$chroot_dir$f"
    done
fi
check "module disabled" test ! -e "$chroot_dir/etc/apache2/mods-enabled/blog.load"
check "apache2ctl configtest without the module" in_ns apache2ctl configtest
in_ns service apache2 stop >/dev/null 2>&1
check "Apache starts without the module" in_ns service apache2 start
get /
check "Apache serves without the module (GET /: $blog_status, Debian's page)" \
    bash -c "[ '$blog_status' = 200 ] && grep -q 'Apache2 Debian Default Page' '$page'"

# ------------------------------------ removing the database and roles
# docs/INSTALL.md's removal block: what CREATE EXTENSION and setup.sql made
# (the database, the cluster's roles) and the lines of pg_hba/pg_ident.
for f in "$blocks_dir"/*-removal.sh; do
    [ -e "$f" ] || { fail "docs/INSTALL.md has no removal block"; break; }
    name=$(basename "$f" .sh)
    say "INSTALL.md block $name:"
    sed '1d; s/^/    /' "$f"
    if in_ns sh -c "cd /root/blog && sh /tmp/readme-blocks/$name.sh" \
            >"$blocks_dir/$name.log" 2>&1; then
        ok "INSTALL.md block $name"
    else
        tail -30 "$blocks_dir/$name.log"
        fail "INSTALL.md block $name"
    fi
done
check "no database blog left" in_ns su - postgres -c \
    "test \"\$(psql -XAtc \"SELECT count(*) FROM pg_database WHERE datname = 'blog'\")\" = 0"
check "no blog role left" in_ns su - postgres -c \
    "test \"\$(psql -XAtc \"SELECT count(*) FROM pg_roles WHERE rolname IN ('blog_web', 'pgblog_web', 'pgblog_writer')\")\" = 0"
check "no blog line left in pg_hba.conf or pg_ident.conf" \
    bash -c "! grep -q 'blog_web' '$chroot_dir'/etc/postgresql/*/main/pg_hba.conf '$chroot_dir'/etc/postgresql/*/main/pg_ident.conf"

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
