#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make system-test: docs/INSTALL.md as written, as root, without sudo and
# without systemd, in fresh minimal systems of each Debian release,
# whatever the host's.
#
#   tests/system/run.sh [--suites "bookworm trixie"] [--parts "build packages source upgrade"]
#                       [--debs DIR]
#
# --debs DIR: the build part keeps the packages in DIR/<suite>/new (and the
# previous release's in DIR/<suite>/old); without the build part, the
# other parts take them from there.
#
# Per suite, each part in a box of its own (tests/system/lib.sh: an overlay
# on a debootstrap minbase, its servers in a network namespace of their
# own, so that ports 80, 5432 and 6379 of this host are untouched):
#   build     a copy of this clone; INSTALL.md's block marked "build"
#             (./blog deb, with lintian); make install's files against the
#             packages'; the packages' autopkgtest (autopkgtest -- null);
#             the previous release's packages, built from its git commit;
#             after Debian 12, ./blog deb again beside bookworm's
#             postgresql-server-dev-15 (a system upgraded from 12)
#   packages  the marked blocks in order, with the packages; the checks;
#   source    (or ./blog install); "Removing it"; nothing of the blog left;
#             every step again, the checks again, the removal again
#   upgrade   the previous release's packages installed and set up by the
#             same blocks; under load (tests/system/load.py) the new
#             packages installed with apt-get, then the block marked
#             "upgrade"; every answer the golden page
# Blocks marked "host" run in the host's network (they need the archive),
# the others in the box's.  The checks run this host's curl in the box's
# network.  Ends with `N passed, N failed`.  Needs root, debootstrap, ip,
# nsenter, unshare, python3, curl and git (sh scripts/deps.sh systest).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

suites="bookworm trixie"
parts="build packages source upgrade"
debs=""
while [ $# -gt 0 ]; do
    case $1 in
        --suites) suites=$2; shift 2 ;;
        --parts) parts=$2; shift 2 ;;
        --debs) debs=$2; shift 2 ;;
        *) echo "usage: $0 [--suites SUITES] [--parts PARTS] [--debs DIR]" >&2; exit 2 ;;
    esac
done
has_part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

npass=0
nfail=0
tag=""          # "<suite> <part>:", before each result
say() { echo "system-test: $*"; }
ok() { npass=$((npass + 1)); echo "ok: $tag $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL: $tag $*"; }
check() {   # check NAME CMD...: one test
    local name=$1
    shift
    if "$@"; then ok "$name"; else fail "$name"; fi
}
die() { say "$*" >&2; echo "$npass passed, $((nfail + 1)) failed"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount, ip netns)"
host_mirror >/dev/null || die "no Debian archive in this host's apt sources"
for tool in debootstrap ip chroot nsenter unshare python3 curl git; do
    command -v $tool >/dev/null || die "$tool missing: sh scripts/deps.sh systest"
done

work=$(mktemp -d /var/tmp/blog-systest.XXXXXX)
cleanup() { set +e; box_close; rm -rf "$work"; }
trap cleanup EXIT
trap 'fail "interrupted"; echo "$npass passed, $nfail failed"; exit 130' INT TERM

# ------------------------------------------------ docs/INSTALL.md's blocks
# Each marked block, in order, as its own script NN-MARKS.sh (MARKS: host,
# build, packages, source, removal, upgrade, joined by "-", or "ns").
blocks=$work/blocks
mkdir "$blocks"
awk -v dir="$blocks" '
    /^<!-- system-test(: [a-z ]+)? -->$/ {
        mark = $0; sub(/^<!-- system-test:? ?/, "", mark); sub(/ ?-->$/, "", mark)
        gsub(/ /, "-", mark); if (mark == "") mark = "ns"; next }
    mark != "" && /^```sh$/ { n++; file = sprintf("%s/%02d-%s.sh", dir, n, mark);
                              print "set -ex" > file; inblock = 1; next }
    inblock && /^```$/ { inblock = 0; mark = ""; close(file); next }
    inblock { print > file; next }
    { mark = "" }
' "$root/docs/INSTALL.md"
[ "$(ls "$blocks" | wc -l)" -ge 8 ] || die "found $(ls "$blocks" | wc -l) marked blocks in docs/INSTALL.md"
marked() { case "-${1%.sh}-" in *"-$2-"*) return 0 ;; esac; return 1; }
# the install's blocks for a way: neither build, upgrade nor removal, and
# packages or source only for that way
install_blocks() {
    local f b
    for f in "$blocks"/*.sh; do
        b=$(basename "$f")
        marked "$b" build || marked "$b" upgrade || marked "$b" removal && continue
        if marked "$b" packages || marked "$b" source; then marked "$b" "$1" || continue; fi
        echo "$b"
    done
}
removal_blocks() {   # the way's removal, then the common one
    local f b
    for f in "$blocks"/*-removal-"$1".sh "$blocks"/*-removal.sh; do
        [ -e "$f" ] && basename "$f"
    done
}
block_named() { (cd "$blocks" && ls | grep -E "^[0-9]+-$1\.sh$" | head -n1); }

# run_block NAME [DIR]: one block as root in /root/blog (or DIR) of the box
run_block() {
    local b=$1 dir=${2:-/root/blog} run=box_ns
    marked "$b" host && run=box_host
    mkdir -p "$box/tmp/install-blocks"
    cp "$blocks/$b" "$box/tmp/install-blocks/"
    say "INSTALL.md block ${b%.sh}:"
    sed '1d; s/^/    /' "$blocks/$b"
    if $run sh -c "cd $dir && sh /tmp/install-blocks/$b" >"$work/${b%.sh}.log" 2>&1; then
        grep -v '^+ ' "$work/${b%.sh}.log" | tail -n 2 | sed 's/^/    | /'
        ok "INSTALL.md block ${b%.sh}"
    else
        tail -n 30 "$work/${b%.sh}.log" | sed 's/^/    | /'
        fail "INSTALL.md block ${b%.sh}"
        return 1
    fi
}

# ------------------------------------------------------------- helpers
page=$work/page
get() {   # get PATH: the body in $page, the status in $status, headers in $page.h
    rm -f "$page" "$page.h"
    status=$(box_net curl -s -D "$page.h" -o "$page" -w '%{http_code}' "http://127.0.0.1$1")
}
header() { tr -d '\r' <"$page.h" | sed -n "s/^$1: //Ip" | tail -n1; }
psql_pg() { box_ns su - postgres -c "psql -XAt -d ${2:-postgres} -c \"$1\""; }
golden_pages() {   # every page of the MANIFEST, byte for byte, with its status
    local want path file bad=0
    while read -r want path file _; do
        [ -n "$want" ] || continue
        get "$path"
        if [ "$status" != "$want" ] || ! cmp -s "$page" "$root/tests/golden/$file"; then
            echo "    GET $path: $status (want $want), $(wc -c <"$page") bytes"; bad=1
        fi
    done <"$root/tests/golden/MANIFEST"
    return $bad
}

# ------------------------------------------------- what the install does
install_checks() {
    local first second n children conns
    check "mod_blog loaded" box_ns sh -c 'apache2ctl -M 2>/dev/null | grep -q blog_module'
    check "the golden pages, byte for byte ($(grep -c . "$root/tests/golden/MANIFEST"))" golden_pages
    check "nothing of the box listens on port 80 of this host" \
        bash -c "! ss -Hltn 'sport = :80' | grep -q ."
    get /
    check "Server: $(header Server) (ServerTokens Prod)" test "$(header Server)" = Apache
    check "Debian's Apache runs the event MPM" \
        box_ns sh -c 'apache2ctl -V 2>/dev/null | grep -q "^Server MPM: *event"'
    n=$(grep -c BlogMount "$box/etc/apache2/sites-available/000-default.conf")
    check "one BlogMount in 000-default.conf ($n)" test "$n" = 1

    get /post/post-2/cached; first=$(header X-Cache)
    get /post/post-2/cached; second=$(header X-Cache)
    check "Redis page cache: MISS then HIT ($first, $second)" test "$first:$second" = MISS:HIT
    box_ns service redis-server stop >/dev/null 2>&1
    get /post/post-2/cached
    check "Redis stopped: /post/post-2/cached from PostgreSQL ($status, X-Cache $(header X-Cache))" \
        bash -c "[ '$(header X-Cache)' = BYPASS ] && cmp -s '$page' '$root/tests/golden/post-2.html'"
    box_ns service redis-server start >/dev/null 2>&1

    check "the roles: blog_web logs in, pgblog_web and pgblog_writer do not" \
        test "$(psql_pg "SELECT string_agg(rolname || '=' || rolcanlogin, ' ' ORDER BY rolname)
               FROM pg_roles WHERE rolname IN ('blog_web', 'pgblog_web', 'pgblog_writer')")" = \
             "blog_web=true pgblog_web=false pgblog_writer=false"
    check "blog_web's only role is pgblog_web" \
        test "$(psql_pg "SELECT string_agg(r.rolname, ' ') FROM pg_auth_members m
               JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
               WHERE u.rolname = 'blog_web'")" = pgblog_web
    n=$(box_ns su - postgres -c "psql -XAt -d blog -c 'SET ROLE blog_web' -c 'SELECT count(*) FROM blog.posts'" 2>&1)
    case $n in *"permission denied"*) ok "blog_web can read no table (blog.posts: permission denied)" ;;
               *) fail "blog_web read blog.posts: $n" ;; esac

    # what BlogMount / leaves to Apache, and what it takes
    get /server-status
    check "/server-status stays Apache's ($status)" \
        bash -c "[ '$status' = 200 ] && grep -q 'Apache Server Status' '$page'"
    get /icons/blank.gif
    check "/icons/ stays Apache's ($status, $(header Content-Type))" \
        test "$status:$(header Content-Type)" = 200:image/gif
    get /index.html
    check "/index.html: the blog's 404 ($status)" \
        bash -c "[ '$status' = 404 ] && cmp -s '$page' '$root/tests/golden/not-found.html'"
    mkdir -p "$box/var/www/html/.well-known/acme-challenge"
    echo token >"$box/var/www/html/.well-known/acme-challenge/t"
    get /.well-known/acme-challenge/t
    check "/.well-known/acme-challenge/t: the blog's 404 ($status)" \
        bash -c "[ '$status' = 404 ] && cmp -s '$page' '$root/tests/golden/not-found.html'"
    rm -rf "$box/var/www/html/.well-known"

    check "installcheck-system left no contrib_regression" \
        test "$(psql_pg "SELECT count(*) FROM pg_database WHERE datname = 'contrib_regression'")" = 0
    check "PostgreSQL's default max_connections is 100" test "$(psql_pg 'SHOW max_connections')" = 100
    check "Debian's prefork allows 150 children" \
        grep -Eq '^[[:space:]]*MaxRequestWorkers[[:space:]]+150$' "$box/etc/apache2/mods-available/mpm_prefork.conf"

    # prefork: one request per child, so a child holds one connection
    if box_ns sh -c 'a2dismod -q mpm_event && a2enmod -q mpm_prefork &&
                     service apache2 restart' >"$work/prefork.log" 2>&1; then
        get /post/post-31
        check "prefork: GET /post/post-31 byte-identical ($status)" \
            cmp -s "$page" "$root/tests/golden/post-31.html"
        sleep 2
        # (no procps in minbase: the children are apache2 processes of www-data)
        children=$(box_ns sh -c 'for f in /proc/[0-9]*/status; do cat "$f" 2>/dev/null; done |
            awk "/^Name:/ { n = \$2 } /^Uid:/ { if (n == \"apache2\" && \$2 == 33) c++ }
                 END { print c + 0 }"')
        conns=$(psql_pg "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mod_blog'")
        check "prefork: $children children hold $conns connections (one each)" \
            test "$children" -gt 0 -a "$conns" -eq "$children"
    else
        tail -n 20 "$work/prefork.log"
        fail "prefork: a2enmod mpm_prefork, restart"
    fi
    box_ns sh -c 'a2dismod -q mpm_prefork && a2enmod -q mpm_event &&
                  service apache2 restart' >>"$work/prefork.log" 2>&1 ||
        fail "back to the event MPM"
}

# ------------------------------------------ after "Removing it": nothing
nothing_left() {
    local left
    left=$( (cd "$box" && find etc/apache2 var/lib/apache2/module usr/lib/apache2/modules \
                 usr/share/man usr/share/doc usr/share/postgresql usr/lib/postgresql \
                 \( -iname '*blog*' \) -print 2>/dev/null; ls -d usr/share/mod_blog 2>/dev/null) )
    check "no file of the blog left${left:+: $(echo $left)}" test -z "$left"
    left=$(grep -rlE 'BlogMount|blog_module|mod_blog' "$box/etc/apache2" 2>/dev/null)
    check "no line of the blog under /etc/apache2${left:+: $(echo $left)}" test -z "$left"
    left=$(box_ns dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' 2>/dev/null | grep -E ' [^ ]*blog[^ ]*$')
    check "no package of the blog left, not even its conffiles${left:+: $(echo $left)}" test -z "$left"
    local hba ident
    hba=$(psql_pg 'SHOW hba_file')
    ident=$(psql_pg 'SHOW ident_file')
    check "no blog line in $hba or $ident" \
        bash -c "[ -f '$box$hba' ] && [ -f '$box$ident' ] && ! grep -q blog_web '$box$hba' '$box$ident'"
    check "no database blog" \
        test "$(psql_pg "SELECT count(*) FROM pg_database WHERE datname = 'blog'")" = 0
    check "no role of the blog" \
        test "$(psql_pg "SELECT count(*) FROM pg_roles WHERE rolname IN ('blog_web', 'pgblog_web', 'pgblog_writer')")" = 0
    check "no connection of mod_blog" \
        test "$(psql_pg "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mod_blog'")" = 0
    check "no cached page in Redis" \
        test -z "$(box_ns redis-cli --scan --pattern 'blog:page:*')"
    check "apache2ctl configtest" box_ns apache2ctl configtest
    check "service apache2 restart" box_ns service apache2 restart
    get /
    check "GET /: Debian's default page ($status)" \
        bash -c "[ '$status' = 200 ] && grep -q 'Apache2 Debian Default Page' '$page'"
}

# one_round WAY N: every install block, the checks, the removal, what is left
one_round() {
    local way=$1 n=$2 b
    for b in $(install_blocks "$way"); do
        if [ "$n" = 1 ] && grep -q 'ServerTokens Prod' "$blocks/$b"; then
            check "Debian's security.conf says ServerTokens OS" \
                grep -q '^ServerTokens OS$' "$box/etc/apache2/conf-available/security.conf"
        fi
        run_block "$b"
        # step 1 done: the package enables the module, make install does not
        if marked "$b" "$way"; then
            if [ "$way" = packages ]; then
                check "the package enabled the module" test -e "$box/etc/apache2/mods-enabled/blog.load"
            else
                check "make install did not enable the module" test ! -e "$box/etc/apache2/mods-enabled/blog.load"
            fi
        fi
        # step 5 twice in the second round: still one BlogMount
        if [ "$n" = 2 ] && grep -q 'BlogMount' "$blocks/$b"; then run_block "$b"; fi
    done
    local major
    major=$(ls "$box/usr/lib/postgresql" | sort -n | tail -n1)
    check "mod_blog(7) names postgresql-$major-pg-blog" bash -c \
        "zcat -f '$box'/usr/share/man/man7/mod_blog.7* | grep -qF '(package postgresql\\-$major\\-pg\\-blog)'"
    install_checks
    if [ "$way" = source ] && [ "$n" = 1 ]; then
        local tool
        for tool in wrk valgrind gnuplot-nox strace; do
            check "./blog install did not install the test tool $tool" \
                bash -c "! chroot '$box' dpkg-query -W -f='\${Status}' $tool 2>/dev/null | grep -q 'ok installed'"
        done
    fi
    say "Removing it ($way, round $n)"
    for b in $(removal_blocks "$way"); do run_block "$b"; done
    nothing_left
}

# ------------------------------------------------------------- the parts
# The previous release: the parent of the commit that put this version at
# the head of debian/changelog.
version=$(sed -n '1s/^[a-z0-9.+-]* (\([^)]*\)).*/\1/p' "$root/debian/changelog")
prev_commit() {
    local c
    c=$(git -C "$root" log --format=%H --reverse -S"blog ($version)" -- debian/changelog | head -n1)
    [ -n "$c" ] && git -C "$root" rev-parse --verify -q "$c^"
}

part_build() {
    local suite=$1 b prev stage
    box_open "$suite" build || { fail "a fresh $suite system"; return 1; }
    box_tree /root/blog
    b=$(block_named host-build)
    run_block "$b" || return 1
    mkdir -p "$work/$suite/new"
    cp "$box"/root/blog/build/deb/*.deb "$work/$suite/new/"
    check "lintian --pedantic: 0 errors, 0 warnings" \
        bash -c "! grep -E '^(E|W): ' '$work/${b%.sh}.log'"
    ls "$work/$suite/new" | sed 's/^/    /'
    major=$(cd "$work/$suite/new" && ls postgresql-*-pg-blog_*.deb | sed 's/^postgresql-\([0-9]*\)-.*/\1/')
    dpkg-deb --fsys-tarfile "$work/$suite/new"/libapache2-mod-blog_*.deb |
        tar -xOf - ./usr/share/man/man7/mod_blog.7.gz | zcat >"$work/man"
    check "mod_blog(7) names postgresql-$major-pg-blog" \
        grep -qF "(package postgresql\\-$major\\-pg\\-blog)" "$work/man"
    check "the packages say what to run after an upgrade (NEWS.Debian)" bash -c "
        dpkg-deb --fsys-tarfile '$work/$suite/new'/libapache2-mod-blog_*.deb |
            tar -xOf - ./usr/share/doc/libapache2-mod-blog/NEWS.Debian.gz | zcat |
            grep -q 'ALTER EXTENSION pg_blog UPDATE'"

    # make install puts the packages' files, make uninstall removes them
    if box_ns sh -c 'cd /root/blog && make -s install DESTDIR=/tmp/stage >/tmp/stage.log 2>&1 &&
            (cd /tmp/stage && find . -type f | sed "s/^\.//" | sort) >/tmp/stage.installed'; then
        for d in "$work/$suite/new"/*.deb; do
            case $d in *-dbgsym_*) continue ;; esac
            dpkg-deb --fsys-tarfile "$d" | tar -t | sed 's/^\.//' | grep -v '/$'
        done | grep -v -e '^/usr/share/doc/' -e '^/usr/share/lintian/' | sed 's/\.gz$//' |
            sort >"$work/packaged"
        check "make install puts the packages' files (but docs and lintian's overrides)" \
            diff -u "$work/packaged" "$box/tmp/stage.installed"
        box_ns sh -c 'cd /root/blog && make -s uninstall DESTDIR=/tmp/stage' >/dev/null 2>&1
        check "make uninstall removes what make install put" \
            test -z "$(find "$box/tmp/stage" -type f)"
    else
        fail "make install DESTDIR=/tmp/stage"
    fi

    # autopkgtest -- null: the box is the testbed.  Its dependencies first,
    # in the host's network; the tests run in the box's, from the tree as
    # committed (debian/tests/control names no package that only another
    # release's build makes).
    local tst
    if box_host sh -c 'cd /root/blog && apt-get install -y -q --no-install-recommends autopkgtest \
            apache2 postgresql redis-server curl make postgresql-server-dev-all \
            $(ls ./build/deb/*.deb | grep -v -- -dbgsym_)' \
            >"$work/autopkgtest-deps.log" 2>&1; then
        box_ns sh -c 'cd /root/blog && autopkgtest $(ls ./build/deb/*.deb | grep -v -- -dbgsym_) \
            /root/blog/ -- null' >"$work/autopkgtest.log" 2>&1
        sed -n '/@@@@ summary/,$p' "$work/autopkgtest.log" |
            grep -E '^(installcheck|golden) ' | sed 's/^/    /'
        for tst in installcheck golden; do
            check "autopkgtest $tst" grep -Eq "^$tst +PASS" "$work/autopkgtest.log"
        done
        grep -qE '^(installcheck|golden) +FAIL' "$work/autopkgtest.log" &&
            grep -E '^not ok|^FAIL|^E: |^badpkg|\*\*\*\*' "$work/autopkgtest.log" | head -n 20 | sed 's/^/    | /'
    else
        tail -n 20 "$work/autopkgtest-deps.log"
        fail "autopkgtest's dependencies"
    fi

    # the previous release's packages, from its commit
    if has_part upgrade; then
        if prev=$(prev_commit); then
            say "the previous release: $(git -C "$root" log -1 --format='%h %s' "$prev" | cut -c1-70)"
            box_tree /root/blog-prev "$prev"
            if box_host sh -c 'cd /root/blog-prev && ./blog deb' >"$work/prev-deb.log" 2>&1; then
                mkdir -p "$work/$suite/old"
                cp "$box"/root/blog-prev/build/deb/*.deb "$work/$suite/old/"
                ok "the previous release's packages ($(cd "$work/$suite/old" && ls | tr '\n' ' '))"
            else
                tail -n 20 "$work/prev-deb.log"
                fail "the previous release's packages (./blog deb at $prev)"
            fi
        else
            fail "no previous release in this clone's history (debian/changelog's $version)"
        fi
    fi
    [ "$suite" = bookworm ] || build_beside_15 "$major"
    box_close
}

# A system upgraded from Debian 12 keeps bookworm's postgresql-server-dev-15
# beside the release's own: ./blog deb there builds an extension package
# for each major, and lintian passes them.  $1: the release's major.  (Last
# in the build part: the box is not the release's own system after it.)
build_beside_15() {
    local major=$1 security
    security=$(host_security_mirror || true)
    {
        printf 'Types: deb\nURIs: %s\nSuites: bookworm\nComponents: main\n' "$(host_mirror)"
        [ -z "$security" ] ||
            printf '\nTypes: deb\nURIs: %s\nSuites: bookworm-security\nComponents: main\n' "$security"
    } >"$box/etc/apt/sources.list.d/bookworm.sources"
    if ! box_host sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends \
            postgresql-server-dev-15' >"$work/beside-15.log" 2>&1; then
        tail -n 20 "$work/beside-15.log"
        fail "bookworm's postgresql-server-dev-15 beside $major (an upgraded Debian 12)"
        return 1
    fi
    rm "$box/etc/apt/sources.list.d/bookworm.sources"
    box_host sh -c 'apt-get update -q && cd /root/blog && ./blog deb' >"$work/deb-beside-15.log" 2>&1
    check "./blog deb beside bookworm's postgresql-server-dev-15 (an upgraded Debian 12): \
postgresql-15-pg-blog and postgresql-$major-pg-blog" \
        test -e "$(ls "$box"/root/blog/build/deb/postgresql-15-pg-blog_*.deb 2>/dev/null | head -n1)" \
        -a -e "$(ls "$box"/root/blog/build/deb/postgresql-"$major"-pg-blog_*.deb 2>/dev/null | head -n1)"
    check "lintian --pedantic on both: 0 errors, 0 warnings" \
        bash -c "grep -q 'postgresql-15-pg-blog' '$work/deb-beside-15.log' &&
                 ! grep -E '^(E|W): ' '$work/deb-beside-15.log'"
}

part_install() {   # part_install SUITE WAY
    local suite=$1 way=$2
    box_open "$suite" "$way" || { fail "a fresh $suite system"; return 1; }
    box_tree /root/blog
    if [ "$way" = packages ]; then
        mkdir -p "$box/root/blog/build/deb"
        cp "$work/$suite/new"/*.deb "$box/root/blog/build/deb/"
    fi
    chmod 700 "$box/root"
    one_round "$way" 1
    say "every step again"
    one_round "$way" 2
    box_close
}

part_upgrade() {
    local suite=$1 b stop=$work/load.stop load_pid rc action a
    box_open "$suite" upgrade || { fail "a fresh $suite system"; return 1; }
    box_tree /root/blog
    mkdir -p "$box/root/blog/build/deb"
    cp "$work/$suite/old"/*.deb "$box/root/blog/build/deb/"
    chmod 700 "$box/root"
    # (not step 7: the tree's regression tests are this release's)
    for b in $(install_blocks packages); do
        grep -q installcheck-system "$blocks/$b" && continue
        run_block "$b"
    done
    check "the previous release's pages are the golden ones" golden_pages
    say "the new packages under load (tests/system/load.py, 8 clients)"
    rm -f "$stop"
    exec 8>/tmp/blog-load.lock
    flock 8
    box_net python3 "$here/load.py" http://127.0.0.1/ "$root/tests/golden" "$stop" \
        --clients 8 --max-seconds 300 >"$work/load.log" 2>&1 &
    load_pid=$!
    sleep 5
    rm -f "$box"/root/blog/build/deb/*.deb
    cp "$work/$suite/new"/*.deb "$box/root/blog/build/deb/"
    b=$(block_named host-packages)
    run_block "$b"
    # What the packages' scripts asked of Apache, which the box's
    # policy-rc.d denied: a host with systemd does it, so the test does.
    action=$(sed -n 's/.*policy-rc\.d denied execution of \([a-z-]*\)\..*/\1/p' \
             "$work/${b%.sh}.log" | sort -u | paste -sd' ')
    check "the new packages ask Apache for a graceful restart (${action:-nothing})" \
        test "$action" = reload
    for a in $action; do
        say "as the packages' scripts do where systemd runs: service apache2 $a"
        box_ns service apache2 "$a" >/dev/null 2>&1 || fail "service apache2 $a"
    done
    sleep 3
    run_block "$(block_named upgrade)"
    sleep 5
    touch "$stop"
    wait "$load_pid"
    rc=$?
    exec 8>&-
    sed 's/^/    | /' "$work/load.log"
    check "under load: every answer the golden page ($(tail -n1 "$work/load.log"))" test "$rc" = 0
    check "pg_blog updated to $version" \
        test "$(psql_pg "SELECT extversion FROM pg_extension WHERE extname = 'pg_blog'" blog)" = "$version"
    check "after the upgrade: the golden pages" golden_pages
    box_close
}

t_all=$(date +%s)
for suite in $suites; do
    if [ -n "$debs" ] && ! has_part build && [ -d "$debs/$suite" ]; then
        mkdir -p "$work/$suite"
        cp -r "$debs/$suite"/. "$work/$suite/"
    fi
    for part in build packages source upgrade; do
        has_part $part || continue
        tag="$suite $part:"
        t=$(date +%s)
        say "$suite: $part"
        case $part in
            build) part_build "$suite"
                   if [ -n "$debs" ]; then
                       rm -rf "${debs:?}/$suite"; mkdir -p "$debs/$suite"
                       cp -r "$work/$suite"/. "$debs/$suite/"
                   fi ;;
            packages|upgrade)
                if ! ls "$work/$suite/new"/*.deb >/dev/null 2>&1; then
                    fail "no packages built for $suite (part build)"; continue
                fi
                if [ $part = upgrade ]; then
                    if ls "$work/$suite/old"/*.deb >/dev/null 2>&1; then part_upgrade "$suite"
                    else fail "no previous release's packages for $suite"; fi
                else
                    part_install "$suite" packages
                fi ;;
            source) part_install "$suite" source ;;
        esac
        box_close
        say "$suite: $part: $(( $(date +%s) - t )) s"
    done
done
tag=""
say "$(( $(date +%s) - t_all )) s"
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
