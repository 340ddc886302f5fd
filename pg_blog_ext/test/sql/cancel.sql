-- A long tag page can be cancelled: the page functions check for
-- interrupts between the leaf pages they read and between the cards they
-- return.  A tag with 40 000 posts (inside a transaction, rolled back) is
-- first timed whole, then given a statement_timeout of a tenth of that:
-- it must stop well before it would have finished, not after.
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

SELECT pg_temp.tag_page_ms('tag-31') AS full_ms \gset
SELECT :full_ms > 0 AS finished, (SELECT count(*) FROM blog.tag_page('tag-31')) AS cards;
SELECT greatest(1, round(:full_ms / 10))::int AS timeout_ms \gset
SET LOCAL statement_timeout = :timeout_ms;
SELECT pg_temp.tag_page_ms('tag-31') AS cancelled_ms \gset
RESET statement_timeout;
-- negative: cancelled; well under the full time: cancelled from inside
SELECT :cancelled_ms < 0 AS cancelled, -(:cancelled_ms) < :full_ms / 2 AS promptly;
ROLLBACK;
