-- SPDX-License-Identifier: Apache-2.0
-- The index page as a careful Go developer fetches it: the posts, then
-- the tags and comment counts of all of them at once (no N+1:
-- cards_plain.sql, which bench/run.sh runs after this file).  With
-- COPIES=1 (bench/run.sh), the counts and tag ids kept on the posts (1.3)
-- instead.
\if :copies
SELECT p.id, p.slug, p.title, p.summary, p.published_at, a.name, p.comment_count, p.tag_ids
  FROM blog.posts p JOIN blog.authors a ON a.id = p.author_id
 ORDER BY p.published_at DESC, p.id DESC LIMIT :n;
\else
SELECT p.id, p.slug, p.title, p.summary, p.published_at, a.name
  FROM blog.posts p JOIN blog.authors a ON a.id = p.author_id
 ORDER BY p.published_at DESC, p.id DESC LIMIT :n;
\endif
