-- SPDX-License-Identifier: Apache-2.0
-- The library serves a schema of every version ever released with the
-- same pages, until ALTER EXTENSION pg_blog UPDATE brings it to the
-- library's version, and then reads what that version made for it: a site
-- that installs a new library (a new package) keeps serving while the
-- update waits.  1.0 has none of the covering indexes (1.1 made them: its
-- pages read the primary keys of the same keys, and the rows from the
-- heap); 1.0 to 1.2 keep no copy of a post's comment count and tag ids on
-- its row (1.3 does: before it, the library counts the comments and reads
-- the post's links in post_tags).
--
-- From 1.0, as its CREATE EXTENSION made it, through each update: the
-- golden pages (golden.sql's view, the pages rendered from the rows and
-- compared by SHA-256), before a VACUUM (every row checked in the heap) and
-- after it (the visibility map, index-only reads); the indexes the pages
-- read (the transaction's own index statistics); a comment and a tag link
-- written with plain SQL, seen by the next pages.
SET TimeZone = 'UTC';
SET client_min_messages = warning;
DROP EXTENSION pg_blog;
CREATE EXTENSION pg_blog VERSION '1.0';
RESET client_min_messages;

CREATE FUNCTION pg_temp.golden(OUT version text, OUT identical bigint, OUT pages bigint)
LANGUAGE sql AS $$
	SELECT (SELECT extversion FROM pg_extension WHERE extname = 'pg_blog'),
		   count(*) FILTER (WHERE identical), count(*)
	FROM golden.pages
$$;

-- The indexes of blog that three pages read: their scan counts in
-- pg_stat_user_indexes before and after the pages, each time once this
-- session's statistics are flushed (pg_stat_force_next_flush(), which
-- acts when the session next waits for a statement).
CREATE TEMP TABLE scans_before (indexrelid oid, n bigint);
CREATE FUNCTION pg_temp.read_pages() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM scans_before;
	INSERT INTO scans_before
	SELECT indexrelid, idx_scan FROM pg_stat_user_indexes WHERE schemaname = 'blog';
	PERFORM count(*) FROM blog.index_page(20);
	PERFORM count(*) FROM blog.tag_page('tag-7');
	PERFORM count(*) FROM blog.post_page('post-31');
	PERFORM pg_stat_force_next_flush();
END
$$;
CREATE FUNCTION pg_temp.indexes_read() RETURNS text
LANGUAGE sql AS $$
	SELECT string_agg(i.indexrelname, ' ' ORDER BY i.indexrelname COLLATE "C")
	FROM pg_stat_user_indexes i JOIN scans_before b USING (indexrelid)
	WHERE i.idx_scan > b.n
$$;

-- Plain SQL writes, the pages that show them, and the seed back.
CREATE FUNCTION pg_temp.writes_seen(OUT index_count integer, OUT index_tags text[],
									OUT post_comments integer, OUT post_tags text[],
									OUT on_tag_1 bigint)
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO blog.comments VALUES (10001, 1000, 'Late', 'Written with plain SQL', now());
	INSERT INTO blog.post_tags VALUES (1000, 1);
	SELECT i.comment_count, i.tag_slugs INTO index_count, index_tags FROM blog.index_page(1) i;
	SELECT cardinality(p.comment_bodies), p.tag_slugs INTO post_comments, post_tags
	FROM blog.post_page('post-1000') p;
	SELECT count(*) INTO on_tag_1 FROM blog.tag_page('tag-1') t WHERE t.slug = 'post-1000';
	DELETE FROM blog.comments WHERE id = 10001;
	DELETE FROM blog.post_tags WHERE post_id = 1000 AND tag_id = 1;
END
$$;

-- Each version: test/include/version_checks.sql (PG_ABS_SRCDIR: pg_regress's
-- --inputdir, test/).
\getenv abs_srcdir PG_ABS_SRCDIR
\set version_checks :abs_srcdir '/include/version_checks.sql'
\i :version_checks

ALTER EXTENSION pg_blog UPDATE TO '1.1';
\i :version_checks

ALTER EXTENSION pg_blog UPDATE TO '1.2';
\i :version_checks

ALTER EXTENSION pg_blog UPDATE TO '1.3';
\i :version_checks

-- The same when another session updates a schema that this one has read:
-- the library's per-backend caches of relations and columns follow.  (The
-- update from 1.0 to 1.1 scans no index of blog, so that the other
-- session's statistics, flushed when it ends, do not count here.)
SET client_min_messages = warning;
DROP EXTENSION pg_blog;
CREATE EXTENSION pg_blog VERSION '1.0';
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;
SELECT * FROM pg_temp.golden();
-- dblink (contrib) to this server (its first socket directory and port),
-- as this role, is the other session
CREATE FUNCTION pg_temp.update_elsewhere(version text) RETURNS text
LANGUAGE sql AS $$
	SELECT dblink_exec(format('dbname=%s user=%s port=%s host=%s',
		current_database(), current_user, current_setting('port'),
		split_part(current_setting('unix_socket_directories'), ',', 1)),
		format('ALTER EXTENSION pg_blog UPDATE TO %L', version))
$$;
SELECT pg_temp.update_elsewhere('1.1');
SELECT * FROM pg_temp.golden();
SELECT pg_stat_force_next_flush();
SELECT pg_temp.read_pages();
SELECT pg_temp.indexes_read();
SELECT pg_temp.update_elsewhere('1.3');
SELECT * FROM pg_temp.golden();

-- As the suite found it: 1.3 as CREATE EXTENSION makes it, vacuumed.
SET client_min_messages = warning;
DROP EXTENSION pg_blog;
CREATE EXTENSION pg_blog;
DROP SCHEMA golden CASCADE;
DROP EXTENSION dblink;
RESET client_min_messages;
VACUUM (ANALYZE);
