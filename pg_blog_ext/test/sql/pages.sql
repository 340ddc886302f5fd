-- SPDX-License-Identifier: Apache-2.0
-- The page functions' rows for the slugs the pages are checked with.
SET TimeZone = 'UTC';

-- Index: 20 newest first, tags in tag-id order, comment counts.
SELECT * FROM blog.index_page();
SELECT count(*) FROM blog.index_page(5);
SELECT count(*) FROM blog.index_page(1000000);
SELECT (array_agg(slug))[1000] AS oldest FROM blog.index_page(1000);

-- Detail pages: 0 comments, 20 comments (odd and even formula), the
-- newest, the oldest, and post-31 with its 10 comments.
\x on
SELECT * FROM blog.post_page('post-21');
SELECT title, author_name, published_at, tag_slugs, tag_names,
       cardinality(comment_authors) AS n, comment_authors[1], comment_bodies[1],
       comment_times[1], comment_times[20], comment_bodies[20]
FROM blog.post_page('post-22');
SELECT title, cardinality(comment_authors) AS n, comment_times[1] < comment_times[2] AS ordered
FROM blog.post_page('post-41');
SELECT title, author_name, published_at, tag_slugs, tag_names, comment_authors, comment_bodies, comment_times
FROM blog.post_page('post-1000');
SELECT title, author_name, published_at, tag_slugs, tag_names, comment_authors, comment_bodies, comment_times
FROM blog.post_page('post-1');
SELECT comment_authors, comment_bodies, comment_times FROM blog.post_page('post-31');
\x off

-- Empty comment arrays are empty, not NULL.
SELECT comment_authors = '{}' AND comment_bodies = '{}' AND comment_times = '{}' AS empty_arrays
FROM blog.post_page('post-21');

-- Tag pages: one row per post, newest first, the tag's name on each row.
SELECT tag_name, count(*), min(published_at), max(published_at),
       bool_and(slug IS NOT NULL) AS all_posts
FROM blog.tag_page('tag-7') GROUP BY tag_name;
SELECT * FROM blog.tag_page('tag-7') LIMIT 3;
SELECT tag_name, count(*) FROM blog.tag_page('tag-5') GROUP BY 1;
SELECT tag_name, count(*) FROM blog.tag_page('tag-12') GROUP BY 1;
SELECT tag_name, count(*) FROM blog.tag_page('tag-21') GROUP BY 1;
SELECT tag_name, count(*) FROM blog.tag_page('tag-30') GROUP BY 1;
SELECT * FROM blog.tag_page('tag-30') LIMIT 2;

-- Order: published_at desc, id desc on every tag page; every row carries
-- its tag.
SELECT count(*) AS out_of_order
FROM (SELECT published_at, lag(published_at) OVER () AS prev
      FROM blog.tag_page('tag-5')) s
WHERE prev <= published_at;
SELECT t.slug, count(*) FILTER (WHERE NOT (t.slug = ANY (p.tag_slugs))) AS missing_tag,
       count(*) = (SELECT count(*) FROM blog.post_tags WHERE tag_id = t.id) AS all_posts
FROM blog.tags t, LATERAL blog.tag_page(t.slug) p
GROUP BY t.slug, t.id ORDER BY t.id LIMIT 5;

-- Every post's detail row agrees with the tables (all 1000).
SELECT count(*) AS posts_checked,
       count(*) FILTER (WHERE pp.title = p.title
                        AND cardinality(pp.comment_authors) =
                            (SELECT count(*) FROM blog.comments c WHERE c.post_id = p.id)
                        AND cardinality(pp.tag_slugs) =
                            (SELECT count(*) FROM blog.post_tags pt WHERE pt.post_id = p.id)) AS consistent
FROM blog.posts p, LATERAL blog.post_page(p.slug) pp;

-- A tag that exists but has no posts: one row, tag name only.
BEGIN;
INSERT INTO blog.tags VALUES (31, 'tag-31', 'Lonely & <new>');
SELECT * FROM blog.tag_page('tag-31');
-- A post without comments and with no tags gets empty arrays.
INSERT INTO blog.posts VALUES (1001, 1, 'post-1001', 'Fresh', 'S', 'B', '2030-01-01 00:00+00');
SELECT * FROM blog.index_page(1);
SELECT * FROM blog.post_page('post-1001');
ROLLBACK;

-- The functions' declared properties.
SELECT p.proname, p.provolatile, p.proparallel, p.proisstrict, p.prosecdef, p.proconfig,
       pg_get_function_result(p.oid)
FROM pg_proc p WHERE p.pronamespace = 'blog'::regnamespace AND p.proname LIKE '%\_page' ORDER BY 1;
