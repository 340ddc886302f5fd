-- SPDX-License-Identifier: Apache-2.0
-- The tag page: the tag, its posts, then their tags and comment counts at
-- once (cards_plain.sql, which bench/run.sh runs after this file).  With
-- COPIES=1, the counts and tag ids kept on the posts (1.3).
SELECT t.id, t.name FROM blog.tags t WHERE t.slug = :tag_slug;
\if :copies
SELECT p.id, p.slug, p.title, p.summary, p.published_at, a.name, p.comment_count, p.tag_ids
  FROM blog.post_tags pt
  JOIN blog.posts p ON p.id = pt.post_id
  JOIN blog.authors a ON a.id = p.author_id
 WHERE pt.tag_id = :tag_id
 ORDER BY p.published_at DESC, p.id DESC;
\else
SELECT p.id, p.slug, p.title, p.summary, p.published_at, a.name
  FROM blog.post_tags pt
  JOIN blog.posts p ON p.id = pt.post_id
  JOIN blog.authors a ON a.id = p.author_id
 WHERE pt.tag_id = :tag_id
 ORDER BY p.published_at DESC, p.id DESC;
\endif
