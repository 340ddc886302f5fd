#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Page function vs the plain queries a careful Go developer sends, per page,
# with pgbench at 50 clients and -M prepared, against the database named by
# the PG* variables (which must hold CREATE EXTENSION pg_blog).
#
#   DURATION=10 CLIENTS=50 JOBS=2 bench/run.sh          table for people
#   bench/run.sh --tsv          "page function_tps plain_tps sqlfunc_tps ratio"
#
# ROUNDS=3 alternates function and plain runs three times per page and
# reports the medians (this machine is shared and noisy).
# SQLFUNC=0 skips the LANGUAGE sql variants (they need CREATE on the
# database: schema blog_bench is created for the run and dropped after it).
# COPIES=1 lets the plain queries read the comment counts and tag ids kept
# on the posts (1.3) instead of counting comments and joining post_tags.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
DURATION=${DURATION:-10}
SQLFUNC=${SQLFUNC:-1}
COPIES=${COPIES:-0}
PGBENCH=${PGBENCH:-pgbench}
PSQL=${PSQL:-psql}
FORMAT=table
[ "${1:-}" = "--tsv" ] && FORMAT=tsv

log=$(mktemp -d "${TMPDIR:-/tmp}/pg_blog_bench.XXXXXX")

q() { "$PSQL" -X -A -t -q -v ON_ERROR_STOP=1 -c "$1"; }

cleanup() {
	if [ "$SQLFUNC" = 1 ]; then
		q "DROP SCHEMA IF EXISTS blog_bench CASCADE" >/dev/null 2>&1 || true
	fi
	rm -rf "$log"
}
trap cleanup EXIT INT TERM

# The ids the plain scripts bind come from the database, as the first query
# of each page would return them.
index_ids=$(q "SELECT array_agg(id ORDER BY published_at DESC, id DESC) FROM (SELECT id, published_at FROM blog.posts ORDER BY published_at DESC, id DESC LIMIT 20) s")
post_id=$(q "SELECT id FROM blog.posts WHERE slug = 'post-31'")
tag_id=$(q "SELECT id FROM blog.tags WHERE slug = 'tag-7'")
tag_ids=$(q "SELECT array_agg(post_id ORDER BY post_id) FROM blog.post_tags WHERE tag_id = $tag_id")
# the distinct tags of those posts, for COPIES=1
tags_of() { q "SELECT coalesce(array_agg(DISTINCT t), '{}') FROM blog.posts p, unnest(p.tag_ids) t WHERE p.id = ANY ('$1')"; }
index_tag_ids='{}' tag_tag_ids='{}' post_tag_ids='{}'
if [ "$COPIES" = 1 ]; then
	index_tag_ids=$(tags_of "$index_ids")
	tag_tag_ids=$(tags_of "$tag_ids")
	post_tag_ids=$(tags_of "{$post_id}")
fi

if [ "$SQLFUNC" = 1 ]; then
	"$PSQL" -X -q -v ON_ERROR_STOP=1 -f "$here/sql_functions.sql" >/dev/null
fi

# tps SCRIPT: pages/s of pgbench running SCRIPT.sql; a card page's plain
# queries end with cards_plain.sql's, for the posts card_ids (card_tag_ids)
tps() {
	out="$log/$1.out"
	script="$log/$1.sql"
	cat "$here/$1.sql" >"$script"
	case $1 in index_plain | tag_plain) cat "$here/cards_plain.sql" >>"$script" ;; esac
	if ! "$PGBENCH" -n -M prepared -c "$CLIENTS" -j "$JOBS" -T "$DURATION" \
		-D n=20 -D post_slug=post-31 -D post_id="$post_id" \
		-D tag_slug=tag-7 -D tag_id="$tag_id" -D copies="$COPIES" \
		-D card_ids="$card_ids" -D card_tag_ids="$card_tag_ids" \
		-D post_tag_ids="$post_tag_ids" \
		-f "$script" >"$out" 2>&1; then
		echo "pgbench failed for $1:" >&2
		cat "$out" >&2
		exit 1
	fi
	tps_of "$out"
}

[ "$FORMAT" = table ] &&
	printf '%-8s %14s %14s %14s %8s\n' page 'function p/s' 'plain p/s' 'sql func p/s' ratio
for page in index post tag; do
	case $page in
	index) card_ids=$index_ids card_tag_ids=$index_tag_ids ;;
	tag) card_ids=$tag_ids card_tag_ids=$tag_tag_ids ;;
	*) card_ids='{}' card_tag_ids='{}' ;;
	esac
	: >"$log/f" && : >"$log/p" && : >"$log/s"
	r=0
	while [ "$r" -lt "$ROUNDS" ]; do
		tps "${page}_function" >>"$log/f"
		tps "${page}_plain" >>"$log/p"
		[ "$SQLFUNC" = 1 ] && tps "${page}_sqlfunc" >>"$log/s"
		r=$((r + 1))
	done
	f=$(median <"$log/f")
	p=$(median <"$log/p")
	s=-
	[ "$SQLFUNC" = 1 ] && s=$(median <"$log/s")
	r=$(awk -v f="$f" -v p="$p" 'BEGIN { printf "%.2f", f / p }')
	case $page in
	index) name=index ;;
	post) name=post-31 ;;
	tag) name=tag-7 ;;
	esac
	if [ "$FORMAT" = tsv ]; then
		printf '%s %s %s %s %s\n' "$name" "$f" "$p" "$s" "$r"
	else
		printf '%-8s %14.0f %14.0f %14s %7sx\n' "$name" "$f" "$p" \
			"$(printf '%s' "$s" | awk '{ if ($1 == "-") print "-"; else printf "%.0f", $1 }')" "$r"
	fi
done
