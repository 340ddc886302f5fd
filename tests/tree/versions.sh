#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every version number of the tree is debian/changelog's (scripts/version.sh
# prints it and writes it into the files that repeat it): pg_blog's
# default_version, which its scripts must reach, the man page's header, and
# PGXN's META.json (as a semantic version: 1.3 is 1.3.0).
# Exit status 1 when one disagrees.
set -u
cd "$(dirname "$0")/../.."

npass=0
nfail=0
check() {
	if [ "$2" = "$3" ]; then
		npass=$((npass + 1))
		echo "ok: $1 is $3"
	else
		nfail=$((nfail + 1))
		echo "FAIL: $1 is '$2', debian/changelog's is '$3' (run scripts/version.sh --write)"
	fi
}

version=$(scripts/version.sh) || exit 1

control=$(sed -n "s/^default_version = '\([^']*\)'.*/\1/p" pg_blog_ext/pg_blog.control)
check "pg_blog.control's default_version" "$control" "$version"

man=$(sed -n '1s/^\.TH MOD_BLOG 7 "[^"]*" "mod_blog \([^"]*\)".*/\1/p' man/mod_blog.7)
check "man/mod_blog.7's version" "$man" "$version"

semver=$version
case $version in *.*.*) ;; *.*) semver=$version.0 ;; *) semver=$version.0.0 ;; esac
for v in $(sed -n 's/^ *"version": "\([^"]*\)".*/\1/p' pg_blog_ext/META.json); do
	check "a version of META.json" "$v" "$semver"
done
[ "$(grep -c '^ *"version": ' pg_blog_ext/META.json)" -eq 2 ] ||
	check "META.json's two versions (the distribution's and pg_blog's)" "missing" "$semver"

# CREATE EXTENSION of the default version needs a script or an update
# that ends at it, and make install must ship it.
reach=""
for f in pg_blog_ext/sql/pg_blog--"$version".sql pg_blog_ext/sql/pg_blog--*--"$version".sql; do
	[ -e "$f" ] && grep -q "sql/${f##*/}" pg_blog_ext/Makefile && reach=$version
done
check "the version pg_blog's shipped scripts reach" "$reach" "$version"

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
