#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `make coverage`: gcov line coverage of every .c file of mod_blog/ and
# pg_blog_ext/src/, from the unit tests and from builds of both parts with
# --coverage driven by the stack's own suites, the way httpd and PostgreSQL
# measure themselves.  Prints one line per file and the total, writes an
# HTML report to build/coverage/html/, and exits non-zero when a file is
# under COVERAGE_MIN % (80) or a suite failed.
#
# - mod_blog: built by its own Makefile (apxs) with --coverage in a folder
#   of links to its sources, build/coverage/mod_blog, and loaded into the
#   stack's Apache (BLOG_MODULE) and the citizen suite's.
# - pg_blog: built by PGXS with --coverage in build/coverage/pg_blog_ext
#   (a VPATH build) and installed into a copy of the PostgreSQL
#   installation under var/coverage/pg, which the stack then runs
#   (BLOG_PG_BIN): PostgreSQL finds $libdir and its share folder relative
#   to its binaries, as its own `make check` does with a temporary install.
#   The system's pg_blog.so, which other clusters load, is never replaced.
# - Apache's children (www-data) and PostgreSQL's backends (the stack's
#   user) write their .gcda at exit, under GCOV_PREFIX (var/coverage/gcov,
#   writable by both); they are copied beside the .gcno at the end.
#
# A stack that was running is stopped first and started again at the end;
# the one this script starts is stopped, pass or fail.  The normal builds
# (mod_blog/.libs, pg_blog_ext's objects, the installed extension) are not
# touched.  It loads the CPUs: run it under the load lock.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
sh scripts/deps.sh runtime build stack test coverage || exit 1
. scripts/env.sh

MIN=${COVERAGE_MIN:-80}
OUT=$ROOT/build/coverage
SYS_PG_BIN=$BLOG_PG_BIN
SYS_PG_CONFIG=$PG_CONFIG
MOD_SO=$OUT/mod_blog/.libs/mod_blog.so
failed=()

die() { echo "coverage: $*" >&2; exit 1; }

# suite NAME CMD...: a suite that drives the coverage builds; its failure
# is reported (the figures are then those of a failing run).
suite() {
    local name=$1 t0=$SECONDS
    shift
    echo
    echo "==== $name"
    if "$@"; then echo "==== ok: $name ($((SECONDS - t0)) s)"
    else failed+=("$name"); echo "==== FAILED: $name ($((SECONDS - t0)) s)"; fi
}

# ------------------------------------------------------------------ builds
echo "==== build: the unit tests, mod_blog and pg_blog with --coverage"
rm -rf "$OUT"
mkdir -p "$OUT/mod_blog" "$OUT/pg_blog_ext/src"
# The unit tests: their .gcda go to tests/unit/build/cov.
suite unit make -s -C tests/unit coverage

# mod_blog's own Makefile in a folder of links, so that its objects (apxs
# puts them beside the sources) stay out of mod_blog/.  Its sources by
# absolute path, so that -fprofile-prefix-map names the real ones in the
# .gcno (gcovr then adds the module's counts to the unit tests' per file).
# Atomic counters: the children's threads share them.
for f in Makefile $(cd "$ROOT/mod_blog" && echo */*.[ch]); do
    mkdir -p "$OUT/mod_blog/$(dirname "$f")" && ln -s "$ROOT/mod_blog/$f" "$OUT/mod_blog/$f"
done
srcs=$(make -s -C "$OUT/mod_blog" --eval 'coverage-srcs: ; @echo $(SRCS)' coverage-srcs)
make -s -C "$OUT/mod_blog" SRCS="$(for f in $srcs; do printf '%s ' "$OUT/mod_blog/$f"; done)" \
    CFLAGS="-O0 -g --coverage -fprofile-update=atomic -fprofile-prefix-map=$OUT/mod_blog=$ROOT/mod_blog" \
    LDFLAGS="-lgcov" || die "the coverage build of mod_blog failed"

# pg_blog: a VPATH build of a clean copy of its folder (make would take the
# objects of a normal build in the source folder for its own), the copy's
# paths mapped back to the real ones in the .gcno.  PGXS appends the
# Makefile's flags to PG_CFLAGS from the environment; -O0 after
# PostgreSQL's -O2, as its --enable-coverage advises.
cp -r "$ROOT/pg_blog_ext" "$OUT/pg_src"
make -s -C "$OUT/pg_src" PG_CONFIG="$SYS_PG_CONFIG" clean >/dev/null
PG_CFLAGS="-O0 --coverage -fprofile-prefix-map=$OUT/pg_src=$ROOT/pg_blog_ext" \
    PG_LDFLAGS="--coverage" \
    make -s -C "$OUT/pg_blog_ext" -f "$OUT/pg_src/Makefile" \
    VPATH="$OUT/pg_src" PG_CONFIG="$SYS_PG_CONFIG" ||
    die "the coverage build of pg_blog failed"

# ------------------------------------------------------------------ stack
was_running=$(scripts/stack.sh status | grep -c running || true)
if [ "$was_running" -gt 0 ]; then
    echo "coverage: stopping the running stack (started again at the end)"
    scripts/stack.sh stop || die "could not stop the running stack"
fi
restore_stack() {
    # The coverage stack stops gracefully: children and backends write
    # their counts at exit.
    local pid
    pid=$(cat "$BLOG_VAR/run/httpd.pid" 2>/dev/null) &&
        kill -WINCH "$pid" 2>/dev/null &&
        for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    scripts/stack.sh stop >/dev/null || true
    if [ "$was_running" -gt 0 ]; then
        umask 022
        env -u BLOG_MODULE -u GCOV_PREFIX -u GCOV_PREFIX_STRIP \
            BLOG_PG_BIN="$SYS_PG_BIN" PG_CONFIG="$SYS_PG_CONFIG" \
            scripts/stack.sh start >/dev/null || echo "coverage: the stack did not start again" >&2
    fi
}
trap restore_stack EXIT

# var/ as stack.sh makes it (a link to /var/tmp when the checkout is out
# of the service users' reach), then what the coverage stack runs.
scripts/stack.sh start redis >/dev/null || die "Redis did not start"
unset BLOG_VAR
. scripts/env.sh
RUN=$BLOG_VAR/coverage
rm -rf "$RUN"
mkdir -p "$RUN/pg"
for d in "$("$SYS_PG_CONFIG" --bindir)" "$("$SYS_PG_CONFIG" --pkglibdir)" \
         "$("$SYS_PG_CONFIG" --sharedir)"; do
    mkdir -p "$RUN/pg$(dirname "$d")"
    cp -a "$d" "$RUN/pg$d"
done
# only this tree's pg_blog, whatever another install left in the system's
rm -f "$RUN/pg$("$SYS_PG_CONFIG" --pkglibdir)"/pg_blog.so \
    "$RUN/pg$("$SYS_PG_CONFIG" --sharedir)"/extension/pg_blog[.-]*
make -s -C "$OUT/pg_blog_ext" -f "$OUT/pg_src/Makefile" \
    VPATH="$OUT/pg_src" PG_CONFIG="$SYS_PG_CONFIG" DESTDIR="$RUN/pg" install >/dev/null ||
    die "installing pg_blog into $RUN/pg failed"

# Where the .gcda are written: each object folder, writable by the users
# that run it; umask 0 so that a file the root parent of Apache creates
# first stays writable by its children.
for d in "$OUT"/mod_blog/{core,store,httpd}/.libs "$OUT/pg_blog_ext/src"; do
    mkdir -p "$RUN/gcov$d"
    chmod 777 "$RUN/gcov$d"
done
umask 000
export GCOV_PREFIX=$RUN/gcov GCOV_PREFIX_STRIP=0
export BLOG_MODULE=$MOD_SO BLOG_CITIZEN_MODULE=$MOD_SO
export BLOG_PG_BIN=$RUN/pg$SYS_PG_BIN PG_CONFIG=$SYS_PG_CONFIG

scripts/stack.sh restart pg >/dev/null && scripts/stack.sh start >/dev/null ||
    die "the coverage stack did not start; see $BLOG_VAR/log"
# The backends must load the coverage build, not the system's.
maps=$(psql -XAtq -c "SELECT count(*) FROM blog.index_page(1)" \
    -c "SELECT pg_read_file('/proc/' || pg_backend_pid() || '/maps')" 2>&1 | grep -o '/[^ ]*pg_blog\.so' | sort -u)
[ "$maps" = "$RUN/pg$("$SYS_PG_CONFIG" --pkglibdir)/pg_blog.so" ] ||
    die "PostgreSQL's backends load '$maps', not the coverage build"

# ------------------------------------------------------------------ suites
suite pg_regress make -s -C pg_blog_ext installcheck
suite "start-up errors" python3 tests/e2e/startup.py
suite privileges python3 tests/e2e/privileges.py
httpd_as() {
    export BLOG_MPM=$1 BLOG_FASTPATH=$2
    scripts/stack.sh restart httpd >/dev/null && return 0
    failed+=("httpd start ($1, $2)")
    return 1
}
if httpd_as event off; then
    suite "e2e (event)" python3 tests/e2e/run.py
    suite "shared mount (event)" python3 tests/e2e/mount_shared.py
    suite "faults (event)" python3 tests/faults/run.py
    suite "status and health (event)" python3 tests/e2e/status.py
    suite "invalidation (event)" python3 tests/e2e/invalidation.py
    suite "Redis AUTH, ACL, seal and TLS (event)" python3 tests/e2e/redis_secure.py
fi
if httpd_as event on; then
    suite "e2e (event, quick_handler)" python3 tests/e2e/run.py
fi
if httpd_as prefork off; then
    suite "e2e (prefork)" python3 tests/e2e/run.py
fi
export BLOG_MPM=event BLOG_FASTPATH=off
suite "citizen (event)" python3 tests/e2e/citizen.py --mpm event

restore_stack
trap - EXIT

# The counts, beside their .gcno.
(cd "$RUN/gcov" && find . -name '*.gcda') | while read -r f; do
    cp "$RUN/gcov/$f" "/${f#./}"
done
rm -rf "$RUN"

# ------------------------------------------------------------------ report
echo
echo "==== line coverage (gcovr; HTML in build/coverage/html/index.html)"
mkdir -p "$OUT/html"
gcovr -r "$ROOT" --filter "$ROOT/mod_blog/" --filter "$ROOT/pg_blog_ext/src/" \
    --json-summary "$OUT/summary.json" --html-details "$OUT/html/index.html" \
    "$ROOT/tests/unit/build/cov" "$OUT" || die "gcovr failed"
python3 scripts/coverage-report.py "$OUT/summary.json" "$MIN" mod_blog/*/*.c pg_blog_ext/src/*.c
rc=$?
if [ ${#failed[@]} -gt 0 ]; then
    printf 'coverage: FAILED suite: %s\n' "${failed[@]}"
    rc=1
fi
exit $rc
