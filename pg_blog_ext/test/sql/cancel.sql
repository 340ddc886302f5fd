-- A long tag page can be cancelled: the page functions check for
-- interrupts between the leaf pages they read and between the cards they
-- return.  A tag with 40 000 posts (inside a transaction, rolled back) is
-- timed whole, then given a statement_timeout of a tenth of that: it must
-- stop well before it would have finished, not after.
BEGIN;
INSERT INTO blog.tags VALUES (31, 'tag-31', 'Many posts');
INSERT INTO blog.posts
SELECT 2000 + g, g % 10 + 1, 'many-' || g, 'Many ' || g, 'S', 'B',
       timestamptz '2026-01-01 00:00+00' + g * interval '1 minute'
FROM generate_series(1, 40000) AS g;
INSERT INTO blog.post_tags SELECT 2000 + g, 31 FROM generate_series(1, 40000) AS g;

CREATE FUNCTION pg_temp.tag_page_ms(t text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	PERFORM count(*) FROM blog.tag_page(t);
	RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
EXCEPTION WHEN query_canceled THEN
	RAISE NOTICE 'tag_page cancelled: %', SQLERRM;
	RETURN -extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$$;

SELECT count(*) AS cards FROM blog.tag_page('tag-31');
-- Timed whole, then cancelled; three times, since the machine may be busy
-- (a wall-clock ratio): one prompt cancel in three shows the checks work,
-- while without them no cancel comes before the page is done.
SELECT pg_temp.tag_page_ms('tag-31') AS full_ms \gset
SELECT greatest(1, round(:full_ms / 10))::int AS timeout_ms \gset
SET LOCAL statement_timeout = :timeout_ms;
SELECT pg_temp.tag_page_ms('tag-31') AS cancelled_ms \gset
RESET statement_timeout;
SELECT :cancelled_ms < 0 AS cancelled_1, -(:cancelled_ms) < :full_ms / 2 AS prompt_1 \gset
SELECT pg_temp.tag_page_ms('tag-31') AS full_ms \gset
SELECT greatest(1, round(:full_ms / 10))::int AS timeout_ms \gset
SET LOCAL statement_timeout = :timeout_ms;
SELECT pg_temp.tag_page_ms('tag-31') AS cancelled_ms \gset
RESET statement_timeout;
SELECT :cancelled_ms < 0 AS cancelled_2, -(:cancelled_ms) < :full_ms / 2 AS prompt_2 \gset
SELECT pg_temp.tag_page_ms('tag-31') AS full_ms \gset
SELECT greatest(1, round(:full_ms / 10))::int AS timeout_ms \gset
SET LOCAL statement_timeout = :timeout_ms;
SELECT pg_temp.tag_page_ms('tag-31') AS cancelled_ms \gset
RESET statement_timeout;
SELECT :cancelled_ms < 0 AS cancelled_3, -(:cancelled_ms) < :full_ms / 2 AS prompt_3 \gset
-- negative: cancelled; well under the full time: cancelled from inside
SELECT :'cancelled_1'::bool AND :'cancelled_2'::bool AND :'cancelled_3'::bool AS cancelled,
       :'prompt_1'::bool OR :'prompt_2'::bool OR :'prompt_3'::bool AS promptly;
ROLLBACK;
