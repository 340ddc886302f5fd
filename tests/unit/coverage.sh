#!/bin/sh
# coverage.sh SRC_DIR COV_DIR: gcov's line coverage of every .c file of
# mod_blog after one run of the unit tests built with --coverage; files the
# unit tests do not link say so.  A table, then the lines of all of them.
set -eu
src=$1
cov=$2
printf '%-16s %7s %7s  %s\n' file lines run coverage
for f in "$src"/*.c; do
    name=$(basename "$f" .c)
    if [ ! -f "$cov/$name.gcda" ]; then
        n=$(grep -c . "$f" || true)
        printf '%-16s %7s %7s  %s\n' "$name.c" - - "not in the unit tests (about $n lines)"
        continue
    fi
    # "File '.../db.c'" then "Lines executed:85.12% of 403"
    gcov -n -o "$cov" "$f" 2>/dev/null | awk -v want="$name.c" '
        /^File / { file = $2; gsub(/\047/, "", file); n = split(file, p, "/"); this = p[n] == want }
        this && /^Lines executed:/ {
            split($2, a, ":"); pct = a[2]; sub(/%/, "", pct); total = $4
            printf "%-16s %7d %7d  %6.1f %%\n", want, total, int(total * pct / 100 + 0.5), pct
            exit
        }'
done
