#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cppcheck (Debian 12's is 2.10) over mod_blog, pg_blog and the unit tests,
# with the headers each is built against, so that it knows APR's variadic
# functions and PostgreSQL's types: any finding fails, style ones too (a
# scope that can narrow, a pointer that can be const, a value never read).
# A suppression goes inline (cppcheck-suppress id) with its reason, as for
# a callback whose parameter types an API (APR, httpd, hiredis) fixes.
#
# One configuration, the one built (no -D), in seconds; every #ifdef
# configuration takes minutes here: CPPCHECK_ALL=1.  USE_ASSERT_CHECKING
# stays undefined then too, as in the server pg_blog is built for (no
# --enable-cassert): defined, each Assert(p != NIL) in PostgreSQL's own
# inline functions (pg_list.h) reads as a test before a dereference.
set -u
cd "$(dirname "$0")/../.."
command -v cppcheck >/dev/null || { echo "cppcheck is not installed (sh scripts/deps.sh test)"; exit 1; }
PG_CONFIG=${PG_CONFIG:-pg_config}
configs="--max-configs=1"
[ -z "${CPPCHECK_ALL:-}" ] || configs="-UUSE_ASSERT_CHECKING"

# normalCheckLevelMaxBranches (cppcheck 2.11 on) is no finding: it says the
# default check level followed fewer branches of a long function, and
# Debian 13's 2.17 counts it into the exit status.
cppcheck --version
exec cppcheck --enable=warning,style,performance,portability --inline-suppr \
    --suppress=normalCheckLevelMaxBranches \
    --error-exitcode=1 --quiet -j 2 $configs \
    --template='{file}:{line}: {severity}: {message} [{id}]' \
    -I mod_blog -I "$(apxs -q INCLUDEDIR)" -I "$(apr-1-config --includedir)" \
    -I "$(apu-1-config --includedir)" \
    -I "$($PG_CONFIG --includedir-server)" -I "$($PG_CONFIG --includedir)" \
    mod_blog pg_blog_ext/src tests/unit
