#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The tree is Apache-2.0: LICENSE holds the licence's text, debian/copyright
# (DEP-5) and PGXN's META.json name it, and every source, script, template
# and build file says so in an SPDX-License-Identifier line near its top,
# which licensecheck (where installed) reads as the Apache License 2.0.
# Files that cannot carry a comment are covered by LICENSE and
# debian/copyright alone: the Markdown documents, JSON, the golden pages
# and the regression outputs (compared byte for byte), Debian's changelog,
# NEWS and source format.
set -uo pipefail
cd "$(dirname "$0")/../.."

npass=0
nfail=0
check() {
    local what=$1 out=$2
    if [ -z "$out" ]; then
        npass=$((npass + 1))
        echo "ok: $what"
    else
        nfail=$((nfail + 1))
        echo "FAIL: $what"
        echo "$out" | head -n 20 | sed 's/^/    /'
    fi
}

if command -v git >/dev/null 2>&1 && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files)
else
    files=$(find . \( -path ./.git -o -path ./var -o -path ./results -o -path ./build \
                -o -name __pycache__ -o -name .libs -o -path ./tests/unit/build \) -prune \
                -o -type f ! -name '*.o' ! -name '*.so' -print | sed 's|^\./||' | sort)
fi
exempt='(\.md|\.json|^LICENSE|^tests/golden/.*|^pg_blog_ext/test/expected/.*\.out|^debian/changelog|^debian/NEWS|^debian/copyright|^debian/source/format)$'
sources=$(echo "$files" | grep -Ev "$exempt" | grep .)

lic=/usr/share/common-licenses/Apache-2.0
if [ -r "$lic" ]; then
    out=$(diff <(sed 's/[[:space:]]*$//' LICENSE) <(sed 's/[[:space:]]*$//' "$lic") | head -n 5)
else
    out=$(grep -q '^ *Apache License$' LICENSE && grep -q 'Version 2.0, January 2004' LICENSE &&
          grep -q 'END OF TERMS AND CONDITIONS' LICENSE || echo "LICENSE is not the Apache License 2.0")
fi
check "LICENSE is the Apache License, Version 2.0" "$out"

out=""
head -n 1 debian/copyright | grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
    out+="debian/copyright is not machine-readable (no DEP-5 Format line)"$'\n'
grep -q '^License: Apache-2.0$' debian/copyright || out+="debian/copyright names no License: Apache-2.0"$'\n'
grep -q '^License: \(none\|UNKNOWN\)' debian/copyright && out+="debian/copyright still has another licence"$'\n'
check "debian/copyright (DEP-5) names Apache-2.0" "${out%$'\n'}"

out=$(python3 -c 'import json,sys; m=json.load(open("pg_blog_ext/META.json")); sys.exit(0 if m.get("license")=="apache_2_0" else 1)' 2>&1 ||
      echo "META.json's license is not apache_2_0")
check "META.json names apache_2_0" "$out"

missing=""
for f in $sources; do
    head -n 12 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0' || missing+="$f"$'\n'
done
n=$(echo "$sources" | wc -l)
check "an SPDX-License-Identifier: Apache-2.0 line near the top of each of $n source, script and build files" "${missing%$'\n'}"

if command -v licensecheck >/dev/null 2>&1; then
    out=$(echo "$sources" | xargs licensecheck --check='.*' --lines=12 | grep -v ': .*Apache License 2.0$')
    check "licensecheck reads the Apache License 2.0 in each of them" "$out"
else
    echo "SKIP: licensecheck not installed"
fi

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
