#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The PostgreSQL major the project builds and runs on, printed: 15 on
# Debian 12, 17 on Debian 13, 18 on unstable.
#
#   BLOG_PG_MAJOR, when set;
#   else the distribution's (the major its "postgresql" package depends on)
#   when that server is installed;
#   else the newest server installed (/usr/lib/postgresql/NN/bin/postgres);
#   else the distribution's, to be installed (scripts/deps.sh).
# Exits 1 when none of these gives one.
set -eu

if [ -n "${BLOG_PG_MAJOR:-}" ]; then echo "$BLOG_PG_MAJOR"; exit 0; fi

installed=$(for p in /usr/lib/postgresql/*/bin/postgres; do
                [ -x "$p" ] || continue
                p=${p#/usr/lib/postgresql/}; echo "${p%%/*}"
            done | sort -n)

distribution() {
    apt-cache depends postgresql 2>/dev/null |
        sed -n 's/^ *Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | head -n1
}

# One server installed: no need to ask apt.
if [ "$(echo "$installed" | grep -c .)" = 1 ]; then echo "$installed"; exit 0; fi
dist=$(distribution)
if [ -n "$dist" ] && echo "$installed" | grep -qx "$dist"; then echo "$dist"; exit 0; fi
if [ -n "$installed" ]; then echo "$installed" | tail -n1; exit 0; fi
[ -n "$dist" ] && { echo "$dist"; exit 0; }
echo "pgmajor: no PostgreSQL installed and none known to apt (apt-get update?)" >&2
exit 1
