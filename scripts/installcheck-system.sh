#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `make installcheck-system`: pg_blog's pg_regress suite against the
# system's PostgreSQL (Debian's cluster, default socket and port; PGHOST,
# PGPORT override), not the private stack; the suite's database is dropped
# afterwards, pass or fail.  Needs make and postgresql-client-NN (which
# holds pg_regress and PGXS), and the extension installed.
#
# As root the suite runs as the cluster's superuser postgres, from a copy
# under /tmp: root has no role in the cluster, peer authentication lets the
# OS user postgres in only as postgres, and postgres can neither read a
# clone under /root nor write its results there.
set -euo pipefail
cd "$(dirname "$0")/.."

db=contrib_regression      # PGXS's name for an extension's test database
work=$(mktemp -d /tmp/pg_blog_regress.XXXXXX)
if [ "$(id -u)" -eq 0 ]; then
    as_pg() { (cd / && runuser -u postgres -- "$@"); }
else
    as_pg() { "$@"; }
fi
cleanup() {
    as_pg dropdb --if-exists "$db" || true
    rm -rf "$work"
}
trap cleanup EXIT

mkdir "$work/pg_blog_ext"
cp -r pg_blog_ext/. "$work/pg_blog_ext"
rm -rf "$work/pg_blog_ext/results" "$work/pg_blog_ext"/regression.*
[ "$(id -u)" -ne 0 ] || chown -R postgres: "$work"
if as_pg make -s -C "$work/pg_blog_ext" installcheck; then
    exit 0
fi
[ ! -f "$work/pg_blog_ext/regression.diffs" ] || cat "$work/pg_blog_ext/regression.diffs"
exit 1
