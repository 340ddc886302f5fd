-- SPDX-License-Identifier: Apache-2.0
-- The seed: counts, a checksum, and a row-by-row comparison with the
-- formulas of the contract's data computed here a second, independent way
-- (procedural loops instead of the extension's set-based inserts).
SET TimeZone = 'UTC';

SELECT (SELECT count(*) FROM blog.authors) AS authors,
       (SELECT count(*) FROM blog.tags) AS tags,
       (SELECT count(*) FROM blog.posts) AS posts,
       (SELECT count(*) FROM blog.post_tags) AS post_tags,
       (SELECT count(*) FROM blog.comments) AS comments;

-- Checksums of every table in a defined order.
SELECT md5(string_agg(a::text, '|' ORDER BY id)) FROM blog.authors a;
SELECT md5(string_agg(t::text, '|' ORDER BY id)) FROM blog.tags t;
-- posts: the contract's columns (comment_count and tag_ids, copies kept by
-- triggers, are checked against the tables below)
SELECT md5(string_agg((p.id, p.author_id, p.slug, p.title, p.summary, p.body,
					   p.published_at)::text, '|' ORDER BY id)) FROM blog.posts p;
SELECT md5(string_agg(pt::text, '|' ORDER BY post_id, tag_id)) FROM blog.post_tags pt;
SELECT md5(string_agg(c::text, '|' ORDER BY id)) FROM blog.comments c;

CREATE TEMP TABLE exp_posts AS
SELECT id, author_id, slug, title, summary, body, published_at FROM blog.posts
WITH NO DATA;
CREATE TEMP VIEW seed_posts AS
SELECT id, author_id, slug, title, summary, body, published_at FROM blog.posts;
CREATE TEMP TABLE exp_post_tags (LIKE blog.post_tags);
CREATE TEMP TABLE exp_comments (LIKE blog.comments);

DO $$
DECLARE
	t text[] := ARRAY['Getting started', 'Fish & Chips', 'Why <b>bold</b> matters',
					  '"Quoted" thoughts', 'It''s complicated', 'Café society',
					  '数据库 notes', 'Plain words'];
	r text[] := ARRAY['Reader One', 'Sam & Max', 'Jürgen', '<anon>', 'O''Hara', 'Quinn "Q"'];
	cs text[] := ARRAY['Great post!', 'I disagree & here is why.',
					   'See <https://example.com>.', 'Thanks — "very" helpful.'];
	body text;
	pub timestamptz;
	n int;
	c int;
	cid int := 0;
BEGIN
	FOR p IN 1..1000 LOOP
		body := 'Body of post ' || p || '. ';
		FOR i IN 1..(5 + p % 10) LOOP
			body := body || 'Lorem ipsum dolor sit amet, consectetur adipiscing elit & sed do <eiusmod> tempor. ';
		END LOOP;
		pub := '2025-01-01 00:00:00 UTC'::timestamptz + make_interval(hours => 6 * (p - 1));
		INSERT INTO exp_posts VALUES (p, p % 10 + 1, 'post-' || p, 'Post ' || p || ': ' || t[p % 8 + 1],
									  'A short summary of post ' || p || '.', body, pub);
		n := CASE WHEN p % 5 < 3 THEN 3 ELSE 2 END;
		FOR k IN 0..n - 1 LOOP
			INSERT INTO exp_post_tags VALUES (p, (7 * p + 11 * k) % 30 + 1);
		END LOOP;
		c := CASE WHEN p % 2 = 1 THEN p % 21 ELSE 20 - ((p - 1) % 21) END;
		FOR k IN 1..c LOOP
			cid := cid + 1;
			INSERT INTO exp_comments VALUES (cid, p, r[(p + k) % 6 + 1],
											 'Comment ' || k || ' on post ' || p || ': ' || cs[k % 4 + 1],
											 pub + make_interval(mins => k));
		END LOOP;
	END LOOP;
END
$$;

-- Each difference would be listed; none expected.
(SELECT 'missing post' AS what, id FROM (SELECT * FROM exp_posts EXCEPT SELECT * FROM seed_posts) d
 UNION ALL
 SELECT 'extra post', id FROM (SELECT * FROM seed_posts EXCEPT SELECT * FROM exp_posts) d
 UNION ALL
 SELECT 'missing link', post_id FROM (SELECT * FROM exp_post_tags EXCEPT SELECT * FROM blog.post_tags) d
 UNION ALL
 SELECT 'extra link', post_id FROM (SELECT * FROM blog.post_tags EXCEPT SELECT * FROM exp_post_tags) d
 UNION ALL
 SELECT 'missing comment', id FROM (SELECT * FROM exp_comments EXCEPT SELECT * FROM blog.comments) d
 UNION ALL
 SELECT 'extra comment', id FROM (SELECT * FROM blog.comments EXCEPT SELECT * FROM exp_comments) d)
ORDER BY 1, 2 LIMIT 10;

-- Each post's comment_count and tag_ids (tag-id order) as its comments and
-- links say: the seed's, set by the 1.3 update.
SELECT count(*) AS posts,
	   count(*) FILTER (WHERE p.comment_count = (SELECT count(*) FROM blog.comments c
												  WHERE c.post_id = p.id)) AS counts_right,
	   count(*) FILTER (WHERE p.tag_ids = ARRAY(SELECT pt.tag_id FROM blog.post_tags pt
												 WHERE pt.post_id = p.id
												 ORDER BY pt.tag_id)) AS tag_ids_right,
	   sum(p.comment_count) AS comments, sum(cardinality(p.tag_ids)) AS links
FROM blog.posts p;

SELECT id, name FROM blog.authors ORDER BY id;
SELECT id, slug, name FROM blog.tags WHERE name NOT LIKE 'Topic %' ORDER BY id;
SELECT min(published_at), max(published_at) FROM blog.posts;
SELECT count(*) FILTER (WHERE n = 0) AS no_comments, count(*) FILTER (WHERE n = 20) AS twenty,
       min(n), max(n)
FROM (SELECT p.id, count(c.id) AS n FROM blog.posts p LEFT JOIN blog.comments c ON c.post_id = p.id
      GROUP BY p.id) s;

-- pg_dump dumps the rows added after the seed.
SELECT c.relname, x.cond
FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS x(reloid, cond)
JOIN pg_class c ON c.oid = x.reloid
WHERE e.extname = 'pg_blog' ORDER BY 1;
