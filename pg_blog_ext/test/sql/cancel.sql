-- SPDX-License-Identifier: Apache-2.0
-- A long tag page can be cancelled: the page functions check for
-- interrupts between the leaf pages they read and between the cards they
-- return.  A tag with 120 000 posts (inside a transaction, rolled back) is
-- run whole (about 250 ms of CPU), then under a statement_timeout of 20 ms:
-- it must stop having used well under half the CPU time of the whole page,
-- not after doing all its work.  (A timeout derived from the measured
-- time, a tenth of it, came to a few ms on a fast run and let the page
-- finish first now and then.)  CPU time (this backend's, from /proc, in the
-- kernel's 10 ms ticks) rather than wall time, which a busy machine
-- stretches at random.
BEGIN;
INSERT INTO blog.tags VALUES (31, 'tag-31', 'Many posts');
INSERT INTO blog.posts
SELECT 2000 + g, g % 10 + 1, 'many-' || g, 'Many ' || g, 'S', 'B',
       timestamptz '2026-01-01 00:00+00' + g * interval '1 minute'
FROM generate_series(1, 120000) AS g;
INSERT INTO blog.post_tags SELECT 2000 + g, 31 FROM generate_series(1, 120000) AS g;

CREATE FUNCTION pg_temp.cpu_ms() RETURNS float8
LANGUAGE sql AS $$
	-- utime and stime, fields 14 and 15 of /proc/self/stat
	SELECT (split_part(s, ' ', 12)::float8 + split_part(s, ' ', 13)::float8) * 10
	FROM (SELECT substr(t, strpos(t, ') ') + 2) AS s
		  FROM pg_read_file('/proc/self/stat') AS t) AS stat
$$;

-- The CPU time of one tag page; negative when the statement timeout
-- cancelled it.
CREATE FUNCTION pg_temp.tag_page_cpu_ms(t text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	c0 float8 := pg_temp.cpu_ms();
BEGIN
	PERFORM count(*) FROM blog.tag_page(t);
	RETURN pg_temp.cpu_ms() - c0;
EXCEPTION WHEN query_canceled THEN
	-- the statement_timeout's cancel, not another one
	IF SQLERRM <> 'canceling statement due to statement timeout' THEN
		RAISE;
	END IF;
	RETURN -(pg_temp.cpu_ms() - c0);
END
$$;

SELECT count(*) AS cards FROM blog.tag_page('tag-31');
-- Three attempts; one prompt cancel shows the checks work (without them
-- the cancel waits until the whole page is built).
SELECT pg_temp.tag_page_cpu_ms('tag-31') AS full_ms \gset
SET LOCAL statement_timeout = 20;
SELECT pg_temp.tag_page_cpu_ms('tag-31') AS cancelled_ms \gset
RESET statement_timeout;
SELECT :cancelled_ms < 0 AND -(:cancelled_ms) < :full_ms / 2 AND :full_ms >= 60 AS prompt_1 \gset
SELECT pg_temp.tag_page_cpu_ms('tag-31') AS full_ms \gset
SET LOCAL statement_timeout = 20;
SELECT pg_temp.tag_page_cpu_ms('tag-31') AS cancelled_ms \gset
RESET statement_timeout;
SELECT :cancelled_ms < 0 AND -(:cancelled_ms) < :full_ms / 2 AND :full_ms >= 60 AS prompt_2 \gset
SELECT pg_temp.tag_page_cpu_ms('tag-31') AS full_ms \gset
SET LOCAL statement_timeout = 20;
SELECT pg_temp.tag_page_cpu_ms('tag-31') AS cancelled_ms \gset
RESET statement_timeout;
SELECT :cancelled_ms < 0 AND -(:cancelled_ms) < :full_ms / 2 AND :full_ms >= 60 AS prompt_3 \gset
-- cancelled (negative), having used well under the full CPU time
SELECT :'prompt_1'::bool OR :'prompt_2'::bool OR :'prompt_3'::bool AS cancelled_promptly;
ROLLBACK;
