-- SPDX-License-Identifier: Apache-2.0
-- Each post's comment_count and tag_ids (1.3) are copies of its comments
-- and post_tags links, kept by triggers in the writing transaction: after
-- every kind of write, and after two sessions' concurrent inserts, they
-- equal what the tables say, and the pages show them.
SET TimeZone = 'UTC';

-- The posts whose copies differ from the tables: none, ever.
CREATE FUNCTION pg_temp.wrong_copies() RETURNS TABLE (id integer, comment_count integer,
	comments bigint, tag_ids integer[], links integer[])
LANGUAGE sql AS $$
	SELECT p.id, p.comment_count, c.n, p.tag_ids, l.ids
	FROM blog.posts p,
		 LATERAL (SELECT count(*) AS n FROM blog.comments c WHERE c.post_id = p.id) c,
		 LATERAL (SELECT ARRAY(SELECT pt.tag_id FROM blog.post_tags pt
							   WHERE pt.post_id = p.id ORDER BY pt.tag_id) AS ids) l
	WHERE p.comment_count <> c.n OR p.tag_ids <> l.ids
	ORDER BY p.id
$$;

SELECT id, comment_count, tag_ids FROM blog.posts WHERE id IN (31, 32) ORDER BY id;

BEGIN;
-- comments: one, several in one statement, moved, deleted
INSERT INTO blog.comments VALUES (10001, 31, 'A', 'one', '2030-01-01 00:00+00');
SELECT comment_count FROM blog.posts WHERE id = 31;
INSERT INTO blog.comments
SELECT 10001 + i, 31 + i % 2, 'B', 'many', '2030-01-01 00:00+00' FROM generate_series(1, 5) i;
SELECT id, comment_count FROM blog.posts WHERE id IN (31, 32) ORDER BY id;
UPDATE blog.comments SET post_id = 32 WHERE id IN (10001, 10002);
SELECT id, comment_count FROM blog.posts WHERE id IN (31, 32) ORDER BY id;
UPDATE blog.comments SET body = 'edited' WHERE id = 10003;
DELETE FROM blog.comments WHERE id BETWEEN 10001 AND 10004;
SELECT id, comment_count FROM blog.posts WHERE id IN (31, 32) ORDER BY id;
-- links: added (kept in tag-id order whatever the insert's), moved, deleted
INSERT INTO blog.post_tags VALUES (31, 29), (31, 1);
SELECT tag_ids FROM blog.posts WHERE id = 31;
SELECT tag_slugs FROM blog.post_page('post-31');
UPDATE blog.post_tags SET post_id = 32 WHERE post_id = 31 AND tag_id = 29;
SELECT id, tag_ids FROM blog.posts WHERE id IN (31, 32) ORDER BY id;
DELETE FROM blog.post_tags WHERE post_id IN (31, 32) AND tag_id IN (1, 29);
SELECT * FROM pg_temp.wrong_copies();
-- the write functions
SELECT blog.publish_post(3, 'copies-new', 'New', 'Summary', 'Body',
						 ARRAY['tag-12', 'tag-5'], '2031-01-01 00:00+00') AS new_id \gset
SELECT comment_count, tag_ids FROM blog.posts WHERE id = :new_id;
SELECT blog.add_comment('copies-new', 'C', 'first') AS cid \gset
SELECT blog.edit_post('copies-new', tags => ARRAY['tag-1', 'tag-30', 'tag-5']);
SELECT slug, comment_count, tag_slugs FROM blog.index_page(1);
SELECT blog.delete_comment(:cid);
SELECT comment_count, tag_ids FROM blog.posts WHERE id = :new_id;
SELECT * FROM pg_temp.wrong_copies();
ROLLBACK;

-- TRUNCATE leaves no post with a count or a tag (rolled back: the seed).
BEGIN;
TRUNCATE blog.comments, blog.post_tags;
SELECT count(*) FILTER (WHERE comment_count <> 0) AS counted,
	   count(*) FILTER (WHERE tag_ids <> '{}') AS tagged FROM blog.posts;
SELECT slug, comment_count, tag_slugs FROM blog.index_page(1);
ROLLBACK;

-- Two sessions add a comment to post 31 at the same time: the second
-- waits for the first's commit and counts both (neither is lost; without
-- the row lock taken before the count, its UPDATE would re-check the row
-- after the wait but keep its count from before the first's commit).
-- dblink (contrib) is the second session; the second runs one statement,
-- so that no later trigger of its own recounts.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;
-- this server (its first socket directory and port), as this role
SELECT dblink_connect('other', format('dbname=%s user=%s port=%s host=%s',
	current_database(), current_user, current_setting('port'),
	split_part(current_setting('unix_socket_directories'), ',', 1))) AS connected;
SELECT set_config('copies.other_pid', pid::text, false) IS NOT NULL AS known
FROM dblink('other', 'SELECT pg_backend_pid()') AS t(pid integer);
SELECT comment_count AS before_count FROM blog.posts WHERE id = 31 \gset
BEGIN;
INSERT INTO blog.comments VALUES (10001, 31, 'One', 'first session', now());
INSERT INTO blog.post_tags VALUES (31, 1);
SELECT dblink_send_query('other',
	'INSERT INTO blog.comments VALUES (10002, 31, ''Two'', ''second session'', now())') AS sent;
-- until the other session waits for this one (at most a minute)
DO $$
DECLARE
	pid integer := current_setting('copies.other_pid')::integer;
BEGIN
	FOR i IN 1..6000 LOOP
		EXIT WHEN pg_backend_pid() = ANY (pg_blocking_pids(pid));
		PERFORM pg_sleep(0.01);
	END LOOP;
	RAISE NOTICE 'other session waiting: %', pg_backend_pid() = ANY (pg_blocking_pids(pid));
END
$$;
COMMIT;
SELECT * FROM dblink_get_result('other') AS t(status text);
SELECT count(*) AS no_more FROM dblink_get_result('other') AS t(status text);
SELECT comment_count - :before_count AS added, tag_ids FROM blog.posts WHERE id = 31;
SELECT cardinality(comment_bodies) - :before_count AS added, tag_slugs
FROM blog.post_page('post-31');
SELECT * FROM pg_temp.wrong_copies();
SELECT dblink_disconnect('other') AS disconnected;
DELETE FROM blog.comments WHERE id IN (10001, 10002);
DELETE FROM blog.post_tags WHERE post_id = 31 AND tag_id = 1;
DROP EXTENSION dblink;
SELECT * FROM pg_temp.wrong_copies();
