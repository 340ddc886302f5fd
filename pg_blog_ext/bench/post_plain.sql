-- SPDX-License-Identifier: Apache-2.0
-- The detail page: the post with its author, its tags, its comments.  With
-- COPIES=1, the tags by the tag ids kept on the post (1.3).
\if :copies
SELECT p.id, p.title, p.body, p.published_at, a.name, p.tag_ids
  FROM blog.posts p JOIN blog.authors a ON a.id = p.author_id
 WHERE p.slug = :post_slug;
SELECT t.slug, t.name FROM blog.tags t WHERE t.id = ANY (:post_tag_ids) ORDER BY t.id;
\else
SELECT p.id, p.title, p.body, p.published_at, a.name
  FROM blog.posts p JOIN blog.authors a ON a.id = p.author_id
 WHERE p.slug = :post_slug;
SELECT t.slug, t.name
  FROM blog.post_tags pt JOIN blog.tags t ON t.id = pt.tag_id
 WHERE pt.post_id = :post_id ORDER BY pt.tag_id;
\endif
SELECT c.author_name, c.body, c.created_at
  FROM blog.comments c
 WHERE c.post_id = :post_id ORDER BY c.created_at, c.id;
