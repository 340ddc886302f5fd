-- The index page as a careful Go developer fetches it: the posts, then the
-- tags and comment counts of all of them at once (no N+1).  :index_ids are
-- the ids the first query returns, bound as an int[] parameter.  With
-- COPIES=1 (bench/run.sh), the counts and tag ids kept on the posts (1.3)
-- instead: the posts, then their tags (:index_tag_ids).
\if :copies
SELECT p.id, p.slug, p.title, p.summary, p.published_at, a.name, p.comment_count, p.tag_ids
  FROM blog.posts p JOIN blog.authors a ON a.id = p.author_id
 ORDER BY p.published_at DESC, p.id DESC LIMIT :n;
SELECT t.id, t.slug, t.name FROM blog.tags t WHERE t.id = ANY (:index_tag_ids);
\else
SELECT p.id, p.slug, p.title, p.summary, p.published_at, a.name
  FROM blog.posts p JOIN blog.authors a ON a.id = p.author_id
 ORDER BY p.published_at DESC, p.id DESC LIMIT :n;
SELECT pt.post_id, t.slug, t.name
  FROM blog.post_tags pt JOIN blog.tags t ON t.id = pt.tag_id
 WHERE pt.post_id = ANY (:index_ids) ORDER BY pt.post_id, pt.tag_id;
SELECT c.post_id, count(*)
  FROM blog.comments c
 WHERE c.post_id = ANY (:index_ids) GROUP BY c.post_id;
\endif
