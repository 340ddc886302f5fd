#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# ALTER EXTENSION pg_blog UPDATE from each older version (1.0, 1.1 and 1.2,
# each through the versions after it) against CREATE EXTENSION of the
# default version,
# each in a scratch database of the cluster that the PG*
# variables name: their pg_dump --schema-only must be the same.  pg_dump
# writes an extension's objects as one CREATE EXTENSION, so they are first
# released from it (ALTER EXTENSION ... DROP, in both databases alike) to be
# dumped one by one: tables, indexes, functions, their options and grants.
# From PostgreSQL 17 on, the row types of an extension's tables and their
# array types are members too and are released with their tables: they are
# left out of the list (and of the count), which is then the same on every
# major.
# Only 1.0 has a script of its own: CREATE EXTENSION ... VERSION '1.1' (or
# any later, the default too) runs 1.0's and the updates on the way, as PostgreSQL
# does for a version without one; the test also shows that the server has
# no full script of a later version (left by an older install), which would
# be run instead.
# CREATE EXTENSION and the updates must create no role (roles are the
# cluster's: sql/setup.sql makes them): no script of the extension may say
# CREATE ROLE, and the cluster's roles are counted before and after.
# Run by test/sql/upgrade.sql; PG_BINDIR (set by the Makefile) picks the
# client programs of the PostgreSQL being tested.
set -eu
bin=${PG_BINDIR:+$PG_BINDIR/}
updated=pg_blog_regress_updated
created=pg_blog_regress_created
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg_blog_upgrade.XXXXXX")

cleanup() {
	for db in $updated $created; do
		"${bin}dropdb" --if-exists "$db" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
cleanup
mkdir -p "$tmp"

q() { "${bin}psql" -X -A -t -q -v ON_ERROR_STOP=1 "$@"; }

# the scripts the server runs (superuser: the suite's role)
extdir=$(q -d postgres -c "SELECT setting FROM pg_catalog.pg_config WHERE name = 'SHAREDIR'")/extension
if grep -il 'CREATE[[:space:]]\{1,\}ROLE' "$extdir"/pg_blog--*.sql; then
	echo "an extension script creates a role"
fi
for f in "$extdir"/pg_blog--*.sql; do
	case ${f##*/} in
	pg_blog--1.0.sql|pg_blog--*--*.sql) ;;
	*) echo "a full script besides 1.0's: ${f##*/}" ;;
	esac
done
roles() { q -d postgres -c "SELECT count(*) FROM pg_catalog.pg_roles"; }
roles_before=$(roles)

"${bin}createdb" $created
q -d $created -c "SET client_min_messages = warning" -c "CREATE EXTENSION pg_blog"
fresh=$(q -d $created -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_blog'")

# the extension's members, but for its tables' row types and their array
# types (17 on), which go with their tables
members_of="d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'pg_blog')
  AND NOT EXISTS (SELECT FROM pg_catalog.pg_type t
                  WHERE d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass
                    AND t.oid = d.objid
                    AND (t.typrelid <> 0
                         OR EXISTS (SELECT FROM pg_catalog.pg_type e
                                    WHERE e.oid = t.typelem AND e.typarray = t.oid
                                      AND e.typrelid <> 0)))"
release="SELECT pg_catalog.format('ALTER EXTENSION pg_blog DROP %s %s', o.type, o.identity)
FROM pg_catalog.pg_depend d, pg_catalog.pg_identify_object(d.classid, d.objid, d.objsubid) o
WHERE $members_of"
# dump db into $tmp/db.sql, its extension's members released first
dump() {
	members=$(q -d "$1" -c "SELECT count(*) FROM pg_catalog.pg_depend d WHERE $members_of")
	printf '%s\n\\gexec\n' "$release" | q -d "$1" >/dev/null
	# the dump's \restrict key is random
	"${bin}pg_dump" --schema-only "$1" | grep -v '^\\\(un\)\{0,1\}restrict ' >"$tmp/$1.sql"
}
dump $created
echo "created $fresh: extension members released and dumped: $members"

for from in 1.0 1.1 1.2; do
	"${bin}dropdb" --if-exists $updated 2>/dev/null
	"${bin}createdb" $updated
	q -d $updated -c "SET client_min_messages = warning" \
		-c "CREATE EXTENSION pg_blog VERSION '$from'"
	before=$(q -d $updated -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_blog'")
	q -d $updated -c "ALTER EXTENSION pg_blog UPDATE"
	after=$(q -d $updated -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_blog'")
	dump $updated
	echo "updated $before -> $after: extension members released and dumped: $members"
	if diff -u "$tmp/$created.sql" "$tmp/$updated.sql" >"$tmp/diff"; then
		echo "pg_dump --schema-only: same"
	else
		echo "pg_dump --schema-only: different"
		cat "$tmp/diff"
	fi
done
if [ "$(roles)" = "$roles_before" ]; then
	echo "roles of the cluster: as many as before"
else
	echo "roles of the cluster: $roles_before before, $(roles) after"
fi
