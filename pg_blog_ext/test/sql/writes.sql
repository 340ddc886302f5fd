-- SPDX-License-Identifier: Apache-2.0
-- The write functions (1.2): what they write, what they refuse and with
-- which errcode, who may call them, and the cache keys every change sends
-- on the channel blog_cache.  Everything written here is removed at the
-- end, so the seed is as it was for the tests after this one.
SET TimeZone = 'UTC';
\set SHOW_CONTEXT never
\set VERBOSITY default

-- A checksum of every table, to compare with at the end.
CREATE TEMP TABLE seed_sums AS
SELECT 'authors' AS t, md5(string_agg(a::text, '|' ORDER BY a.id)) AS sum FROM blog.authors a
UNION ALL SELECT 'tags', md5(string_agg(g::text, '|' ORDER BY g.id)) FROM blog.tags g
UNION ALL SELECT 'posts', md5(string_agg(p::text, '|' ORDER BY p.id)) FROM blog.posts p
UNION ALL SELECT 'post_tags', md5(string_agg(pt::text, '|' ORDER BY pt.post_id, pt.tag_id)) FROM blog.post_tags pt
UNION ALL SELECT 'comments', md5(string_agg(c::text, '|' ORDER BY c.id)) FROM blog.comments c;

-- Refusals, each with its errcode (nothing is written, nothing is sent).
\set ON_ERROR_STOP 0
\set VERBOSITY sqlstate
SELECT blog.publish_post(1, 'Bad-Slug', 'T', 'S', 'B', ARRAY['tag-1']);
SELECT blog.publish_post(1, '', 'T', 'S', 'B', ARRAY['tag-1']);
SELECT blog.publish_post(1, repeat('a', 65), 'T', 'S', 'B', ARRAY['tag-1']);
SELECT blog.publish_post(1, 'post-1', 'T', 'S', 'B', ARRAY['tag-1']);
SELECT blog.publish_post(1, 'new-post', 'T', 'S', 'B', ARRAY['tag-99']);
SELECT blog.publish_post(1, 'new-post', 'T', 'S', 'B', ARRAY['Tag 1']);
SELECT blog.publish_post(1, 'new-post', 'T', 'S', 'B', '{}');
SELECT blog.publish_post(1, 'new-post', 'T', 'S', 'B', NULL);
SELECT blog.publish_post(1, 'new-post', 'T', 'S', 'B',
	ARRAY['tag-1', 'tag-2', 'tag-3', 'tag-4', 'tag-5', 'tag-6', 'tag-7', 'tag-8', 'tag-9', 'tag-10', 'tag-11']);
SELECT blog.publish_post(99, 'new-post', 'T', 'S', 'B', ARRAY['tag-1']);
SELECT blog.publish_post(NULL, 'new-post', 'T', 'S', 'B', ARRAY['tag-1']);
SELECT blog.publish_post(1, 'new-post', '', 'S', 'B', ARRAY['tag-1']);
SELECT blog.publish_post(1, 'new-post', 'T', E' \n\t', 'B', ARRAY['tag-1']);
SELECT blog.publish_post(1, 'new-post', 'T', 'S', NULL, ARRAY['tag-1']);
SELECT blog.publish_post(1, 'new-post', repeat('é', 201), 'S', 'B', ARRAY['tag-1']);
SELECT blog.publish_post(1, 'new-post', 'T', 'S', repeat('x', 100001), ARRAY['tag-1']);
SELECT blog.edit_post('no-such-post', title => 'T');
SELECT blog.edit_post('post-1');
SELECT blog.edit_post('post-1', body => '');
SELECT blog.edit_post('post-1', tags => ARRAY['tag-1', 'nope']);
SELECT blog.add_comment('post-1', 'Reader', '');
SELECT blog.add_comment('post-1', '', 'Body');
SELECT blog.add_comment('post-1', repeat('r', 101), 'Body');
SELECT blog.add_comment('post-1', 'Reader', repeat('b', 10001));
SELECT blog.add_comment('no-such-post', 'Reader', 'Body');
SELECT blog.add_comment('../post-1', 'Reader', 'Body');
SELECT blog.delete_comment(999999);
SELECT blog.delete_comment(NULL);
\set VERBOSITY default
-- The messages themselves, for three of them.
SELECT blog.publish_post(1, 'Bad-Slug', 'T', 'S', 'B', ARRAY['tag-1']);
SELECT blog.publish_post(1, 'new-post', 'T', 'S', 'B', ARRAY['tag-99']);
SELECT blog.add_comment('post-1', 'Reader', repeat('b', 10001));
\set ON_ERROR_STOP 1
SELECT count(*) AS posts, (SELECT count(*) FROM blog.comments) AS comments,
	   (SELECT count(*) FROM blog.post_tags) AS links FROM blog.posts;

-- Who may write: the writers' role, through the four functions only; the
-- web role may call none of them.  Both are this test's, granted as a
-- site's set-up grants pgblog_writer and pgblog_web (sql/setup.sql of the
-- repository; the web role by test/include/web_role.sql, as privileges.sql
-- makes it), and dropped at its end.
CREATE ROLE regress_pgblog_writer NOLOGIN;
GRANT USAGE ON SCHEMA blog TO regress_pgblog_writer;
GRANT EXECUTE ON FUNCTION blog.publish_post(integer, text, text, text, text, text[], timestamptz) TO regress_pgblog_writer;
GRANT EXECUTE ON FUNCTION blog.edit_post(text, text, text, text, text[]) TO regress_pgblog_writer;
GRANT EXECUTE ON FUNCTION blog.add_comment(text, text, text) TO regress_pgblog_writer;
GRANT EXECUTE ON FUNCTION blog.delete_comment(integer) TO regress_pgblog_writer;
\getenv abs_srcdir PG_ABS_SRCDIR
\set web_role :abs_srcdir '/include/web_role.sql'
\i :web_role
SELECT p.proname,
	   has_function_privilege('regress_pgblog_writer', p.oid, 'EXECUTE') AS writer,
	   has_function_privilege('regress_pgblog_web', p.oid, 'EXECUTE') AS web,
	   has_function_privilege('public', p.oid, 'EXECUTE') AS public,
	   p.prosecdef AS definer,
	   p.proconfig
FROM pg_proc p WHERE p.pronamespace = 'blog'::regnamespace ORDER BY 1;
SELECT c.relname,
	   has_table_privilege('regress_pgblog_writer', c.oid, 'SELECT,INSERT,UPDATE,DELETE,TRUNCATE') AS writer_any
FROM pg_class c WHERE c.relnamespace = 'blog'::regnamespace AND c.relkind = 'r' ORDER BY 1;
CREATE ROLE regress_blog_writer LOGIN IN ROLE regress_pgblog_writer;
CREATE ROLE regress_blog_reader LOGIN IN ROLE regress_pgblog_web;

\set ON_ERROR_STOP 0
SET ROLE regress_blog_reader;
SELECT blog.add_comment('post-1', 'Reader', 'Body');
SELECT blog.delete_comment(1);
RESET ROLE;
SET ROLE regress_blog_writer;
INSERT INTO blog.comments VALUES (20000, 1, 'x', 'x', now());
DELETE FROM blog.comments WHERE id = 1;
SELECT blog.notify_stale(ARRAY['post-1'], true);
SELECT count(*) FROM blog.index_page(20);
RESET ROLE;
\set ON_ERROR_STOP 1

-- What the writes write, as the pages show it, and the keys each commit
-- sends.  psql prints a notification with the PID of the backend that
-- sent it, so the notifications go to a file that is shown with the PID
-- taken out.  Posts 981-1000 are the index's 20.
\o results/writes.notify
LISTEN blog_cache;
SET ROLE regress_blog_writer;
SELECT blog.publish_post(2, 'fresh-post', 'Fresh & new', 'Its summary', 'Its body',
						 ARRAY['tag-7', 'tag-5', 'tag-7'], '2030-01-01 00:00+00') AS new_post;
SELECT blog.add_comment('fresh-post', 'Zoë', 'First <comment>') AS c1 \gset
SELECT blog.add_comment('post-31', 'Reader', 'Off the index') AS c2 \gset
SELECT blog.edit_post('fresh-post', title => 'Edited title', tags => ARRAY['tag-1']);
SELECT blog.edit_post('post-500', summary => 'A new summary');
SELECT blog.delete_comment(:c2);
RESET ROLE;
SELECT slug, title, author_name, comment_count, tag_slugs, summary FROM blog.index_page(1);
SELECT title, tag_names, comment_authors, comment_bodies FROM blog.post_page('fresh-post');
SELECT summary FROM blog.index_page(1000) WHERE slug = 'post-500';
SELECT cardinality(comment_bodies) AS comments FROM blog.post_page('post-31');

-- Plain SQL by the owner sends the same keys.  A post that moves out of
-- the 20 latest, and one that moves in, name the index.
INSERT INTO blog.comments VALUES (20001, 990, 'Owner', 'Plain SQL', now());
UPDATE blog.comments SET body = 'Plain SQL, edited' WHERE id = 20001;
UPDATE blog.posts SET published_at = '2020-01-01 00:00+00' WHERE id = 995;
UPDATE blog.posts SET published_at = '2030-06-01 00:00+00' WHERE id = 7;
UPDATE blog.posts SET title = 'Post 8: Still off the index' WHERE id = 8;
UPDATE blog.tags SET name = 'Zürich!' WHERE id = 12;
UPDATE blog.authors SET name = 'Ada' WHERE id = 1;
-- One transaction: every key once, sent at the commit.
BEGIN;
UPDATE blog.posts SET title = 'Post 996: again' WHERE id = 996;
UPDATE blog.posts SET summary = 'again' WHERE id = 996;
INSERT INTO blog.comments VALUES (20002, 996, 'Owner', 'In the same transaction', now());
COMMIT;
-- Rolled back: nothing sent.
BEGIN;
TRUNCATE blog.comments;
DELETE FROM blog.comments WHERE id = 20002;
ROLLBACK;
-- A statement that touches more than 200 pages names all of them: "*".
UPDATE blog.posts SET summary = summary WHERE id <= 300;

UNLISTEN *;
\o
\! sed -e 's/server process with PID [0-9]*/server process with PID N/' results/writes.notify

-- Back to the seed, and the visibility map the index-only reads rely on.
DELETE FROM blog.comments WHERE id > 10000;
DELETE FROM blog.post_tags WHERE post_id > 1000;
DELETE FROM blog.posts WHERE id > 1000;
UPDATE blog.posts SET published_at = timestamptz '2025-01-01 00:00:00+00' + (id - 1) * interval '6 hours'
WHERE id IN (7, 995);
UPDATE blog.posts SET title = 'Post 8: Getting started' WHERE id = 8;
UPDATE blog.posts SET title = 'Post 996: It''s complicated', summary = 'A short summary of post 996.' WHERE id = 996;
UPDATE blog.posts SET summary = 'A short summary of post 500.' WHERE id = 500;
UPDATE blog.tags SET name = 'Zürich' WHERE id = 12;
UPDATE blog.authors SET name = 'Ada Lovelace' WHERE id = 1;
VACUUM blog.authors, blog.tags, blog.posts, blog.post_tags, blog.comments;

SELECT count(*) AS posts, (SELECT count(*) FROM blog.comments) AS comments,
	   (SELECT count(*) FROM blog.post_tags) AS links FROM blog.posts;
SELECT s.t, s.sum = n.sum AS as_seeded
FROM seed_sums s JOIN (
	SELECT 'authors' AS t, md5(string_agg(a::text, '|' ORDER BY a.id)) AS sum FROM blog.authors a
	UNION ALL SELECT 'tags', md5(string_agg(g::text, '|' ORDER BY g.id)) FROM blog.tags g
	UNION ALL SELECT 'posts', md5(string_agg(p::text, '|' ORDER BY p.id)) FROM blog.posts p
	UNION ALL SELECT 'post_tags', md5(string_agg(pt::text, '|' ORDER BY pt.post_id, pt.tag_id)) FROM blog.post_tags pt
	UNION ALL SELECT 'comments', md5(string_agg(c::text, '|' ORDER BY c.id)) FROM blog.comments c) n
	ON n.t = s.t ORDER BY s.t COLLATE "C";  -- the same order under any locale

DROP ROLE regress_blog_writer;
DROP ROLE regress_blog_reader;
DROP OWNED BY regress_pgblog_writer, regress_pgblog_web;
DROP ROLE regress_pgblog_writer, regress_pgblog_web;
