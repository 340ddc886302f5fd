-- The tag page: the tag, its posts, then their tags and comment counts at
-- once.  :tag_ids are the ids the second query returns.  With COPIES=1, the
-- counts and tag ids kept on the posts (1.3), then their tags
-- (:tag_tag_ids).
SELECT t.id, t.name FROM blog.tags t WHERE t.slug = :tag_slug;
\if :copies
SELECT p.id, p.slug, p.title, p.summary, p.published_at, a.name, p.comment_count, p.tag_ids
  FROM blog.post_tags pt
  JOIN blog.posts p ON p.id = pt.post_id
  JOIN blog.authors a ON a.id = p.author_id
 WHERE pt.tag_id = :tag_id
 ORDER BY p.published_at DESC, p.id DESC;
SELECT t.id, t.slug, t.name FROM blog.tags t WHERE t.id = ANY (:tag_tag_ids);
\else
SELECT p.id, p.slug, p.title, p.summary, p.published_at, a.name
  FROM blog.post_tags pt
  JOIN blog.posts p ON p.id = pt.post_id
  JOIN blog.authors a ON a.id = p.author_id
 WHERE pt.tag_id = :tag_id
 ORDER BY p.published_at DESC, p.id DESC;
SELECT pt.post_id, t.slug, t.name
  FROM blog.post_tags pt JOIN blog.tags t ON t.id = pt.tag_id
 WHERE pt.post_id = ANY (:tag_ids) ORDER BY pt.post_id, pt.tag_id;
SELECT c.post_id, count(*)
  FROM blog.comments c
 WHERE c.post_id = ANY (:tag_ids) GROUP BY c.post_id;
\endif
