-- SPDX-License-Identifier: Apache-2.0
-- What the page functions' relation names resolve to.  They run no SQL
-- (no operator or function is called by name), and they open every table
-- and index by name in the schema blog: a caller's search_path, a schema
-- before it with same-named tables, or a temporary table must not change
-- what they read.  Their per-backend cache of those OIDs must follow DDL,
-- and a missing relation is named.
SET TimeZone = 'UTC';

-- Same-named tables in a schema searched first, holding hijacked rows.
CREATE SCHEMA evil;
CREATE TABLE evil.posts (LIKE blog.posts INCLUDING INDEXES);
CREATE TABLE evil.tags (LIKE blog.tags INCLUDING INDEXES);
CREATE TABLE evil.comments (LIKE blog.comments INCLUDING INDEXES);
CREATE TABLE evil.post_tags (LIKE blog.post_tags INCLUDING INDEXES);
CREATE TABLE evil.authors (LIKE blog.authors INCLUDING INDEXES);
INSERT INTO evil.posts SELECT * FROM blog.posts WHERE id IN (31, 1000);
UPDATE evil.posts SET title = 'hijacked';
INSERT INTO evil.tags SELECT id, slug, 'hijacked' FROM blog.tags;
INSERT INTO evil.authors SELECT id, 'hijacked' FROM blog.authors;

-- Temporary tables are searched first for relations by default.
CREATE TEMP TABLE posts (LIKE blog.posts INCLUDING INDEXES);
INSERT INTO posts SELECT * FROM blog.posts WHERE id IN (31, 1000);
UPDATE posts SET title = 'hijacked by a temp table';

SET search_path = evil, public;
-- The trap is real: unqualified names resolve to evil's tables.
SELECT title FROM posts WHERE id = 31;
SELECT name FROM tags WHERE id = 7;

SELECT title, author_name, tag_names FROM blog.post_page('post-31');
SELECT slug, title, author_name FROM blog.index_page(2);
SELECT tag_name, count(*) FROM blog.tag_page('tag-7') GROUP BY 1;

-- pg_temp explicitly after evil, and an empty search_path.
SET search_path = evil, pg_temp;
SELECT title FROM blog.post_page('post-31');
SET search_path = '';
SELECT title FROM blog.post_page('post-31');
SELECT pg_catalog.count(*) FROM blog.index_page(20);
RESET search_path;

SET client_min_messages = warning;
DROP SCHEMA evil CASCADE;
DROP TABLE pg_temp.posts;
RESET client_min_messages;

-- The extension dropped and created again in the caller's transaction, at
-- version v (NULL: the default), without a notice per object dropped.
CREATE FUNCTION pg_temp.recreate(v text) RETURNS void
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
	DROP EXTENSION pg_blog;
	EXECUTE 'CREATE EXTENSION pg_blog' || coalesce(' VERSION ' || quote_literal(v), '');
END
$$;

-- The OIDs kept per backend follow DDL: the extension dropped and created
-- again in this session gets new tables, which the next call reads.
BEGIN;
SELECT count(*) FROM blog.tag_page('tag-7');
SELECT 'blog.posts'::regclass::oid AS old_posts \gset
SELECT FROM pg_temp.recreate(NULL);
SELECT 'blog.posts'::regclass::oid <> :old_posts AS new_table;
UPDATE blog.posts SET title = 'Retitled after CREATE EXTENSION' WHERE id = 992;
SELECT count(*), min(title) FILTER (WHERE slug = 'post-992') FROM blog.tag_page('tag-7');
ROLLBACK;
SELECT title FROM blog.tag_page('tag-7') LIMIT 1;

-- A schema older than the library is read as it is (the test versions
-- shows its pages), and its update keeps a row added before it: 1.0's
-- (no covering indexes, and no comment_count or tag_ids on posts) and
-- 1.2's (whose update sets the copies from the rows as they are).
BEGIN;
SELECT FROM pg_temp.recreate('1.0');
INSERT INTO blog.comments VALUES (10001, 31, 'Late', 'Added under 1.0', now());
SELECT title, cardinality(comment_bodies) AS comments, comment_bodies[11]
FROM blog.post_page('post-31');
ALTER EXTENSION pg_blog UPDATE;
SELECT title, cardinality(comment_bodies) AS comments, comment_bodies[11]
FROM blog.post_page('post-31');
SELECT comment_count FROM blog.index_page(1000) WHERE slug = 'post-31';
ROLLBACK;

BEGIN;
SELECT FROM pg_temp.recreate('1.2');
INSERT INTO blog.comments VALUES (10001, 1000, 'Late', 'Added under 1.2', now());
DELETE FROM blog.post_tags WHERE post_id = 1000 AND tag_id = 3;
SELECT slug, comment_count, tag_slugs FROM blog.index_page(1);
ALTER EXTENSION pg_blog UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pg_blog';
SELECT slug, comment_count, tag_slugs FROM blog.index_page(1);
ROLLBACK;

-- A relation that every version has is named when it is missing.
BEGIN;
DROP INDEX blog.posts_published_idx;
SELECT count(*) FROM blog.index_page(20);
ROLLBACK;
