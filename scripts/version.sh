#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The blog's version is stated once, in debian/changelog's newest entry
# (the Debian packages take it from there).  The other files that name it,
# pg_blog's default_version, the man page's header and PGXN's META.json (a
# semantic version there: 1.3.0), are written from it:
#
#   scripts/version.sh            print it
#   scripts/version.sh --write    write it into the files that repeat it
#
# tests/tree/versions.sh fails when one of them disagrees.  pg_blog's
# version is the package's: a new version of the package that changes
# nothing in the extension still gets an update script (empty if need be),
# so that ALTER EXTENSION pg_blog UPDATE names the package installed.
set -eu
cd "$(dirname "$0")/.."

version=$(sed -n '1s/^[a-z0-9.+-]* (\([^)]*\)).*/\1/p' debian/changelog)
[ -n "$version" ] || { echo "version.sh: no version in debian/changelog" >&2; exit 1; }

case ${1:-} in
'')
	echo "$version" ;;
--write)
	sed -i "s/^default_version = '[^']*'/default_version = '$version'/" \
		pg_blog_ext/pg_blog.control
	sed -i "1s/^\(\.TH MOD_BLOG 7 \"[^\"]*\" \"mod_blog \)[^\"]*\"/\1$version\"/" \
		man/mod_blog.7
	case $version in *.*.*) semver=$version ;; *.*) semver=$version.0 ;; *) semver=$version.0.0 ;; esac
	sed -i "s/^\( *\"version\": \"\)[^\"]*\"/\1$semver\"/" pg_blog_ext/META.json ;;
*)
	echo "usage: scripts/version.sh [--write]" >&2; exit 2 ;;
esac
