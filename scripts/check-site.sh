#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The installed site against the golden pages: every page of
# tests/golden/MANIFEST fetched from the site and compared byte for byte,
# with its status.  Needs curl (apt-get install curl) and this clone.
#
#   sh scripts/check-site.sh [URL]      (default: http://127.0.0.1/)
#
# One line per page that differs, then `N passed, N failed`; exits 1 when
# a page differs.
set -u
cd "$(dirname "$0")/.."
base=${1:-http://127.0.0.1/}
base=${base%/}
command -v curl >/dev/null || { echo "check-site: needs curl: apt-get install curl" >&2; exit 2; }
page=$(mktemp)
trap 'rm -f "$page"' EXIT
pass=0
fail=0
while read -r status path file _; do
    [ -n "$status" ] || continue
    got=$(curl -s -o "$page" -w '%{http_code}' "$base$path")
    if [ "$got" = "$status" ] && cmp -s "$page" "tests/golden/$file"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $base$path: status $got (want $status), $(wc -c <"$page") bytes" \
             "($(wc -c <"tests/golden/$file") in tests/golden/$file)"
    fi
done <tests/golden/MANIFEST
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
