-- SPDX-License-Identifier: Apache-2.0
-- Every call reads the five tables: a row inserted, updated or deleted
-- with plain SQL shows in the very next call of each page, whether the
-- heap page it lands on is all-visible (the VACUUM below sets the
-- visibility map, which the index-only reads trust) or not.
SET TimeZone = 'UTC';
VACUUM blog.authors, blog.tags, blog.posts, blog.post_tags, blog.comments;

-- The index page: post-1000 is the newest card.
SELECT slug, title, comment_count, tag_slugs FROM blog.index_page(1);
INSERT INTO blog.comments VALUES (10001, 1000, 'Fresh', 'A new comment', '2030-01-01 00:00+00');
SELECT slug, comment_count FROM blog.index_page(1);
INSERT INTO blog.post_tags VALUES (1000, 1);
SELECT slug, tag_slugs, tag_names FROM blog.index_page(1);
UPDATE blog.posts SET title = 'Retitled' WHERE id = 1000;
SELECT slug, title FROM blog.index_page(1);
UPDATE blog.authors SET name = 'Renamed author' WHERE id = 1;
SELECT slug, author_name FROM blog.index_page(1);
UPDATE blog.tags SET name = 'Renamed tag' WHERE id = 1;
SELECT slug, tag_names FROM blog.index_page(1);
DELETE FROM blog.comments WHERE id = 10001;
DELETE FROM blog.post_tags WHERE post_id = 1000 AND tag_id = 1;
UPDATE blog.posts SET title = 'Post 1000: Plain words' WHERE id = 1000;
UPDATE blog.authors SET name = 'Ada Lovelace' WHERE id = 1;
UPDATE blog.tags SET name = 'Topic 1' WHERE id = 1;
SELECT slug, title, author_name, comment_count, tag_slugs, tag_names FROM blog.index_page(1);

-- The detail page.
SELECT title, tag_slugs, cardinality(comment_bodies) AS comments FROM blog.post_page('post-31');
INSERT INTO blog.comments VALUES (10002, 31, 'Fresh', 'Newest comment', '2030-01-01 00:00+00');
SELECT cardinality(comment_bodies) AS comments, comment_authors[11], comment_bodies[11]
FROM blog.post_page('post-31');
UPDATE blog.comments SET body = 'Edited comment' WHERE id = 10002;
SELECT comment_bodies[11] FROM blog.post_page('post-31');
INSERT INTO blog.post_tags VALUES (31, 1);
SELECT tag_slugs, tag_names FROM blog.post_page('post-31');
UPDATE blog.posts SET title = 'Retitled 31' WHERE id = 31;
SELECT title FROM blog.post_page('post-31');
DELETE FROM blog.comments WHERE id = 10002;
DELETE FROM blog.post_tags WHERE post_id = 31 AND tag_id = 1;
UPDATE blog.posts SET title = 'Post 31: Plain words' WHERE id = 31;
SELECT title, tag_slugs, cardinality(comment_bodies) AS comments FROM blog.post_page('post-31');

-- The tag page: a new link adds a card, a new comment changes its count,
-- a retitled post changes its title, a deleted link removes the card.
SELECT count(*) FROM blog.tag_page('tag-7');
INSERT INTO blog.post_tags VALUES (1000, 7);
SELECT count(*) FROM blog.tag_page('tag-7');
SELECT slug, title, comment_count, tag_slugs FROM blog.tag_page('tag-7') LIMIT 1;
INSERT INTO blog.comments VALUES (10003, 1000, 'Fresh', 'On the tag page', '2030-01-01 00:00+00');
UPDATE blog.posts SET title = 'Retitled on the tag page' WHERE id = 1000;
SELECT slug, title, comment_count FROM blog.tag_page('tag-7') LIMIT 1;
-- A new post with the tag, dated last, comes first.
INSERT INTO blog.posts VALUES (1001, 2, 'post-1001', 'Brand new', 'New summary', 'Body', '2031-01-01 00:00+00');
INSERT INTO blog.post_tags VALUES (1001, 7);
SELECT slug, title, author_name, comment_count, tag_slugs, summary FROM blog.tag_page('tag-7') LIMIT 2;
SELECT count(*) FROM blog.tag_page('tag-7');
DELETE FROM blog.post_tags WHERE tag_id = 7 AND post_id IN (1000, 1001);
DELETE FROM blog.posts WHERE id = 1001;
DELETE FROM blog.comments WHERE id = 10003;
UPDATE blog.posts SET title = 'Post 1000: Plain words' WHERE id = 1000;
SELECT count(*), max(slug COLLATE "C") FILTER (WHERE slug = 'post-1000') AS post_1000
FROM blog.tag_page('tag-7');

-- Inside a transaction, the transaction's own changes show too.
BEGIN;
DELETE FROM blog.comments WHERE post_id = 992;
SELECT slug, comment_count FROM blog.tag_page('tag-7') LIMIT 1;
SELECT cardinality(comment_bodies) FROM blog.post_page('post-992');
ROLLBACK;
SELECT slug, comment_count FROM blog.tag_page('tag-7') LIMIT 1;

-- The reads left every index as they found it (the heap fetches along HOT
-- chains above write the TID they are given: never the index page's).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;
RESET client_min_messages;
SELECT c.relname, bt_index_check(c.oid, true) FROM pg_class c
WHERE c.relnamespace = 'blog'::regnamespace AND c.relkind = 'i' ORDER BY 1;
DROP EXTENSION amcheck;
