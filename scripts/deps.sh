#!/bin/sh
# Install the Debian packages the project needs, and only those missing.
# Works as root or as a user with sudo.  Safe to run again.  iproute2 and
# pgbouncer are for the tests only (tests/cluster: namespaces, PgBouncer).
set -eu

PKGS="make gcc libc6-dev pkg-config
apache2 apache2-dev libapr1-dev libaprutil1-dev
postgresql-15 postgresql-server-dev-15 postgresql-client-15 libpq-dev
libhiredis-dev redis-server redis-tools
python3 curl wrk gnuplot-nox valgrind strace procps
iproute2 pgbouncer"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# The packages' own services (the system PostgreSQL, Redis and Apache) are
# not needed: the project runs a private stack on its own ports.
$SUDO apt-get install -y -q --no-install-recommends $missing
