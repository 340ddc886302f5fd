#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# man/mod_blog.7 as installed: it names the extension's package of the
# PostgreSQL majors it was built for ("postgresql-NN-pg-blog, NN the
# PostgreSQL major" in the tree), for make install and debian/rules.
#
#   sh scripts/man-page.sh MAJOR... >FILE
set -eu
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: scripts/man-page.sh MAJOR..." >&2; exit 2; }
packages=$(for v in "$@"; do printf 'postgresql\\\\-%s\\\\-pg\\\\-blog\n' "$v"; done |
           sed ':a; N; $!ba; s/\n/ or /g')
sed "s/postgresql\\\\-NN\\\\-pg\\\\-blog, NN the PostgreSQL major/$packages/" man/mod_blog.7
