#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Two builds of pg_blog side by side on the same seed: instructions per call
# of each page function (callgrind) and pages/s through pgbench.
#
#   bench/callgrind.sh                 old (OLD_REF) against new (this tree)
#   BUILDS=new bench/callgrind.sh      this tree only, no pgbench
#   PGBENCH=0 bench/callgrind.sh       instructions only
#   NEW_REF=abc123 bench/callgrind.sh  new from a git ref, not the tree
#
# Each build gets a private copy of the PostgreSQL installation that
# PG_CONFIG names (PostgreSQL is relocatable), its own cluster and its own
# seed (this tree's sql/setup.sql for both: CREATE EXTENSION of that build,
# then the VACUUM that sets the visibility map), so
# nothing is installed into the system's PostgreSQL.  OLD_REF is a git ref
# of this repository; by default the last 1.2 build (the hand-written
# B-tree walk on nbtree's internals before it builds on 15 only).
#
# Instructions: the page functions run in a single-user backend under
# callgrind; a function's count is its inclusive cost, and the figure per
# call is (cost of 1 + CALLS calls - cost of 1 call) / CALLS, which leaves
# out the first call's catalog and relation cache loads.
#
# pgbench: CLIENTS clients, -M prepared, DURATION seconds per page and
# build, old and new alternated ROUNDS times, under the machine's load lock
# (LOCK).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
ext=$(cd "$here/.." && pwd)
repo=$(cd "$ext/.." && pwd)

OLD_REF=${OLD_REF:-3f1bd72}
NEW_REF=${NEW_REF:-}
BUILDS=${BUILDS:-old new}
PG_CONFIG=${PG_CONFIG:-pg_config}
WORK=${WORK:-/var/tmp/pg_blog_callgrind}
PORT_BASE=${PORT_BASE:-54340}
CALLS=${CALLS:-10}
PGBENCH=${PGBENCH:-1}
DURATION=${DURATION:-8}
LOCK=${LOCK:-/tmp/blog-load.lock}
OSUSER=${OSUSER:-pgblog}
case " $BUILDS " in *" old "*) ;; *) PGBENCH=0 ;; esac

die() { echo "callgrind.sh: $*" >&2; exit 1; }
is_root() { [ "$(id -u)" -eq 0 ]; }
# PostgreSQL refuses to run as root
as_pg() { if is_root; then (cd / && runuser -u "$OSUSER" -- "$@"); else "$@"; fi; }

command -v valgrind >/dev/null || die "valgrind is not installed"
if is_root && ! id "$OSUSER" >/dev/null 2>&1; then
	useradd --system --user-group --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin "$OSUSER"
fi

sys_bindir=$("$PG_CONFIG" --bindir)
sys_sharedir=$("$PG_CONFIG" --sharedir)
sys_incdir=$("$PG_CONFIG" --pkgincludedir)

# build NAME: source tree, relocated installation, cluster
port_of() { case $1 in old) echo $((PORT_BASE + 1)) ;; *) echo $((PORT_BASE + 2)) ;; esac; }

prepare() {
	local b=$1 dir=$WORK/$1 root
	root=$dir/inst
	mkdir -p "$dir"
	chmod 755 "$WORK" "$dir"
	if [ ! -x "$root$sys_bindir/postgres" ]; then
		mkdir -p "$root$(dirname "$sys_bindir")" "$root$(dirname "$sys_sharedir")" \
			"$root$(dirname "$sys_incdir")"
		cp -a "$(dirname "$sys_bindir")" "$root$(dirname "$(dirname "$sys_bindir")")/"
		cp -a "$sys_sharedir" "$root$(dirname "$sys_sharedir")/"
		cp -a "$sys_incdir" "$root$(dirname "$sys_incdir")/"
	fi
	pgc=$root$sys_bindir/pg_config
	[ "$("$pgc" --sharedir)" = "$root$sys_sharedir" ] ||
		die "$PG_CONFIG's installation is not relocatable"

	rm -rf "$dir/src"
	mkdir -p "$dir/src"
	if [ "$b" = old ] || [ -n "$NEW_REF" ]; then
		local ref=$OLD_REF
		[ "$b" = new ] && ref=$NEW_REF
		git -C "$repo" archive "$ref" pg_blog_ext sql | tar -x -C "$dir/src"
	else
		(cd "$repo" && tar -c --exclude='*.o' --exclude='*.bc' --exclude='*.so' \
			--exclude=results --exclude=regression.diffs --exclude=regression.out \
			pg_blog_ext sql) | tar -x -C "$dir/src"
	fi
	make -s -C "$dir/src/pg_blog_ext" PG_CONFIG="$pgc" install >"$dir/build.log" 2>&1 ||
		{ cat "$dir/build.log" >&2; die "build $b failed"; }

	local data=$dir/data port
	port=$(port_of "$b")
	as_pg "$root$sys_bindir/pg_ctl" -D "$data" status >/dev/null 2>&1 &&
		as_pg "$root$sys_bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null
	rm -rf "$data" "$dir/run"
	mkdir -p "$data" "$dir/run" "$dir/cg"
	is_root && chown "$OSUSER" "$data" "$dir/run" "$dir/cg"
	as_pg "$root$sys_bindir/initdb" -D "$data" -U postgres -E UTF8 --locale=C \
		--auth=trust >/dev/null 2>"$dir/initdb.log" ||
		{ cat "$dir/initdb.log" >&2; die "initdb of $b failed"; }
	start "$b"
	psql -X -q -h "$dir/run" -p "$port" -U postgres -d postgres -c "CREATE DATABASE blog"
	psql -X -q -v ON_ERROR_STOP=1 -h "$dir/run" -p "$port" -U postgres -d blog \
		-f "$repo/sql/setup.sql" >/dev/null
	stop "$b"
}

# the cluster's settings on its command line: a socket of its own, no TCP
start() {
	local dir=$WORK/$1
	as_pg "$dir/inst$sys_bindir/pg_ctl" -D "$dir/data" -l "$dir/data/log" -w \
		-o "-p $(port_of "$1") -k $dir/run -c listen_addresses= -c max_connections=80 \
		    -c shared_buffers=128MB -c synchronous_commit=off -c log_min_messages=warning" \
		start >/dev/null
}
stop() {
	local dir=$WORK/$1
	as_pg "$dir/inst$sys_bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
}

pages=(tag index post)
call_of() {
	case $1 in
	tag) echo "SELECT count(*) FROM blog.tag_page('tag-7');" ;;
	index) echo "SELECT count(*) FROM blog.index_page(20);" ;;
	post) echo "SELECT count(*) FROM blog.post_page('post-31');" ;;
	esac
}
symbol_of() { echo "blog_$1_page"; }

# callgrind NAME N: the inclusive instructions of each page function over N
# calls of each, as "page count" lines
callgrind() {
	local b=$1 n=$2 dir=$WORK/$1 in out p i
	in=$dir/cg/calls.$n.sql
	out=$dir/cg/callgrind.$n.out
	: >"$in"
	for p in "${pages[@]}"; do
		for ((i = 0; i < n; i++)); do call_of "$p" >>"$in"; done
	done
	rm -f "$out"
	as_pg valgrind --tool=callgrind --callgrind-out-file="$out" \
		"$dir/inst$sys_bindir/postgres" --single -D "$dir/data" blog \
		<"$in" >"$dir/cg/single.$n.log" 2>"$dir/cg/valgrind.$n.log" ||
		{ tail "$dir/cg/valgrind.$n.log" >&2; die "callgrind run of $b failed"; }
	callgrind_annotate --inclusive=yes --threshold=100 "$out" >"$dir/cg/annotate.$n.txt"
	for p in "${pages[@]}"; do
		# "1,234,567 (12.34%)  file:symbol [object]"
		awk -v sym="$(symbol_of "$p")" -v page="$p" '
			{ for (i = 1; i <= NF; i++) if ($i ~ ":" sym "$") { gsub(",", "", $1); print page, $1; exit } }
		' "$dir/cg/annotate.$n.txt"
	done
}

mkdir -p "$WORK"
for b in $BUILDS; do prepare "$b"; done

# the machine's load lock around anything that loads a CPU for long
locked() { ( flock 9 && "$@" ) 9>"$LOCK"; }

# every callgrind run in one hold of the lock (about 10 s each)
callgrind_all() {
	local b
	for b in $BUILDS; do
		callgrind "$b" 1 | sed "s/^/$b 1 /"
		callgrind "$b" $((CALLS + 1)) | sed "s/^/$b n /"
	done
}

declare -A counts ipc
while read -r b n p c; do counts[$b.$n.$p]=$c; done < <(locked callgrind_all)
for b in $BUILDS; do
	for p in "${pages[@]}"; do
		[ -n "${counts[$b.1.$p]:-}" ] && [ -n "${counts[$b.n.$p]:-}" ] ||
			die "no callgrind count for $p ($b)"
		ipc[$b.$p]=$(((counts[$b.n.$p] - counts[$b.1.$p]) / CALLS))
	done
done

bench_one() {   # bench_one BUILD PAGE: pages/s
	local dir=$WORK/$1 out=$WORK/$1/pgbench.$2.out
	pgbench -n -M prepared -c "$CLIENTS" -j "$JOBS" -T "$DURATION" \
		-h "$dir/run" -p "$(port_of "$1")" -U postgres \
		-D n=20 -D post_slug=post-31 -D tag_slug=tag-7 \
		-f "$here/$2_function.sql" blog >"$out" 2>&1 ||
		{ cat "$out" >&2; die "pgbench failed ($1, $2)"; }
	tps_of "$out"
}

bench_all() {
	local r p b
	for ((r = 0; r < ROUNDS; r++)); do
		for p in "${pages[@]}"; do
			for b in $BUILDS; do echo "$b $p $(bench_one "$b" "$p")"; done
		done
	done
}

declare -A tps
if [ "$PGBENCH" = 1 ]; then
	for b in $BUILDS; do start "$b"; done
	trap 'for b in $BUILDS; do stop "$b" || true; done' EXIT
	results=$(locked bench_all)
	for b in $BUILDS; do
		for p in "${pages[@]}"; do
			# the median of the rounds
			tps[$b.$p]=$(printf '%s\n' "$results" |
				awk -v b="$b" -v p="$p" '$1 == b && $2 == p { print $3 }' | median)
		done
	done
fi

name_of() { case $1 in tag) echo "tag_page('tag-7')" ;; index) echo "index_page(20)" ;; post) echo "post_page('post-31')" ;; esac; }
target_of() { case $1 in tag) echo 1100000 ;; index) echo 300000 ;; post) echo 90000 ;; esac; }

echo "instructions per call (callgrind, inclusive, mean of $CALLS warm calls)"
if [ "$BUILDS" = new ]; then
	printf '%-22s %12s %12s\n' function new target
	for p in "${pages[@]}"; do
		printf '%-22s %12s %12s\n' "$(name_of "$p")" "${ipc[new.$p]}" "$(target_of "$p")"
	done
else
	printf '%-22s %12s %12s %7s %12s\n' function old new new/old target
	for p in "${pages[@]}"; do
		printf '%-22s %12s %12s %7s %12s\n' "$(name_of "$p")" "${ipc[old.$p]}" "${ipc[new.$p]}" \
			"$(awk -v o="${ipc[old.$p]}" -v n="${ipc[new.$p]}" 'BEGIN { printf "%.2f", n / o }')" \
			"$(target_of "$p")"
	done
fi
if [ "$PGBENCH" = 1 ]; then
	echo
	echo "pages/s (pgbench, $CLIENTS clients, -M prepared, ${DURATION} s x $ROUNDS rounds, median)"
	printf '%-22s %12s %12s %7s\n' function old new new/old
	for p in "${pages[@]}"; do
		printf '%-22s %12.0f %12.0f %7s\n' "$(name_of "$p")" "${tps[old.$p]}" "${tps[new.$p]}" \
			"$(awk -v o="${tps[old.$p]}" -v n="${tps[new.$p]}" 'BEGIN { printf "%.2f", n / o }')"
	done
fi
