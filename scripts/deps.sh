#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install the Debian packages the project needs, and only those missing.
# Works as root or as a user with sudo.  Safe to run again.
#
#   sh scripts/deps.sh [SET ...]     (default: runtime build stack test)
#
# The sets, so that a production host gets only what it runs:
#   runtime   what a system install serves with (Apache, PostgreSQL, Redis)
#   build     compiler and headers to build the module and the extension
#   stack     what the private stack's scripts call besides (curl, redis-cli)
#   test      the test and benchmark tools (python3, valgrind, wrk, ...)
#   deb       what `make deb` needs (debhelper, lintian, ...)
#   systest   what `make system-test` and `make pg-versions` need
#             (debootstrap, ip)
#   coverage  what `make coverage` reports with (gcovr)
#
# PostgreSQL is the distribution's major (15 on Debian 12, 17 on Debian 13)
# or the one installed: scripts/pgmajor.sh, BLOG_PG_MAJOR to choose.
set -eu
here=$(dirname "$0")

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
updated=0
if ! pg=$(sh "$here/pgmajor.sh" 2>/dev/null); then
    # a fresh system: apt knows no package yet
    $SUDO apt-get update -q
    updated=1
    pg=$(sh "$here/pgmajor.sh")
fi

runtime="apache2 postgresql-$pg postgresql-client-$pg redis-server libxxhash0"
build="make gcc libc6-dev pkg-config apache2-dev libapr1-dev libaprutil1-dev
postgresql-server-dev-$pg libpq-dev libhiredis-dev libxxhash-dev libssl-dev"
stack="curl redis-tools procps"
# iproute2, pgbouncer and redis-sentinel: tests/cluster (network namespaces,
# PgBouncer, the cache's Redis through Sentinel); debootstrap:
# tests/pgversions (PostgreSQL 15, 17, 18 in chroots)
test="python3 curl redis-tools wrk gnuplot-nox valgrind strace procps linux-perf
iproute2 pgbouncer redis-sentinel debootstrap"
# dh-apache2 is provided by apache2-dev (in build)
# build-essential: dpkg-buildpackage checks for it
deb="build-essential debhelper dpkg-dev fakeroot lintian postgresql-server-dev-all"
# procps: pgrep finds the namespace holder (tests/pgversions/lib.sh); curl:
# the system test's checks; git: the previous release's tree
systest="debootstrap iproute2 util-linux procps python3 curl git"
coverage="gcovr"
# tests/e2e/citizen.py: a certificate (openssl), htpasswd (apache2-utils) and
# the h2c Upgrade (python3-h2); its other HTTP/2 cases need Debian's curl,
# which is built with nghttp2
test="$test openssl apache2-utils python3-h2"
# the static part of make check (tests/tree/cppcheck.sh)
test="$test cppcheck"

[ $# -gt 0 ] || set -- runtime build stack test
PKGS=""
for set in "$@"; do
    case $set in
        runtime) PKGS="$PKGS $runtime" ;;
        build) PKGS="$PKGS $build" ;;
        stack) PKGS="$PKGS $stack" ;;
        test) PKGS="$PKGS $test" ;;
        deb) PKGS="$PKGS $build $deb" ;;
        systest) PKGS="$PKGS $systest" ;;
        coverage) PKGS="$PKGS $coverage" ;;
        *) echo "deps: unknown set '$set' (runtime build stack test deb systest coverage)" >&2
           exit 2 ;;
    esac
done

missing=""
for p in $(printf '%s\n' $PKGS | sort -u); do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "deps: installing$missing"
[ $updated = 1 ] || $SUDO apt-get update -q
# The private stack does not need the packages' own services (the system
# PostgreSQL, Redis and Apache): it runs its own on other ports.
$SUDO apt-get install -y -q --no-install-recommends $missing
