#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The repository explains itself (docs/CONTRACT.md): no file of the tree
# points at a document outside it, and every citation of the contract names
# a section the contract has.
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

# The tree's files: git's list in a checkout; in a tree received without
# git (a tarball, a copy), every file but what .gitignore keeps out (the
# build's and the stack's) and what a Debian build leaves in debian/.
if command -v git >/dev/null 2>&1 && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files)
else
    files=$(find . \( -path ./.git -o -path ./var -o -path ./results -o -path ./build \
                -o -path ./tests/unit/build -o -path ./pg_blog_ext/results \
                -o -name .libs -o -name __pycache__ -o -path ./debian/.debhelper \
                -o -path ./debian/tmp -o -path ./debian/libapache2-mod-blog \
                -o -path './debian/postgresql-*' \) -prune -o -type f \
                ! -name '*.o' ! -name '*.lo' ! -name '*.la' ! -name '*.slo' \
                ! -name '*.so' ! -name '*.bc' ! -path './pg_blog_ext/regression.*' \
                -print | sed 's|^\./||' | sort)
fi
files=$(echo "$files" | grep -v '^tests/tree/refs.sh$')

# The shared benchmark documents do not exist in a clone.
outside=$(echo "$files" | xargs grep -nIE '\.\./shared|SPEC\.md|RESEARCH\.md|DESIGN\.md|SPEC section' 2>/dev/null)
check "nothing cites a document outside the tree" "$outside"

# "docs/CONTRACT.md section N" or "sections N and M": each N a heading.
sections=$(grep -oE '^## [0-9]+' docs/CONTRACT.md | awk '{print $2}' | sort -u)
bad=""
while IFS=: read -r file line cited; do
    for n in $(echo "$cited" | grep -oE '[0-9]+(\.[0-9]+)?' | cut -d. -f1); do
        # a here-string, not a pipe: under pipefail, echo writing its next
        # line after grep -q has matched and gone (SIGPIPE) failed the test
        grep -qx "$n" <<<"$sections" || bad+="$file:$line: section $n"$'\n'
    done
done < <(echo "$files" | xargs grep -noIE 'CONTRACT\.md sections? [0-9]+(\.[0-9]+)?((, | and | to |-)[0-9]+(\.[0-9]+)?)*' 2>/dev/null)
check "every cited section of docs/CONTRACT.md exists" "${bad%$'\n'}"

ncite=$(echo "$files" | xargs grep -lI 'CONTRACT\.md' 2>/dev/null | wc -l)
[ "$ncite" -ge 10 ] && out="" || out="only $ncite files cite docs/CONTRACT.md"
check "code and tests cite the contract ($ncite files)" "$out"

# Every relative link of a Markdown document names a file of the tree (the
# documents were split out of the README once: a link left behind fails).
badlinks=""
while IFS=: read -r file line link; do
    target=${link#*](}; target=${target%)}; target=${target%%#*}
    case $target in ''|http*|mailto:*) continue ;; esac
    path=$(dirname "$file")/$target
    [ -e "$path" ] || badlinks+="$file:$line: $target"$'\n'
done < <(echo "$files" | grep '\.md$' | xargs grep -noE '\]\([^)[:space:]]+\)' 2>/dev/null)
check "every relative link of the Markdown documents resolves" "${badlinks%$'\n'}"

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
