-- The page functions written as single LANGUAGE sql statements, for
-- comparison with the C functions.  Not SECURITY DEFINER, so that the
-- planner may inline them (its best case); a deployed version would need
-- SECURITY DEFINER, which forbids inlining.  Not STRICT either: a strict
-- set-returning SQL function is never inlined.
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS blog_bench;

CREATE OR REPLACE FUNCTION blog_bench.index_page(n integer DEFAULT 20)
RETURNS TABLE (slug text, title text, author_name text,
			   published_at timestamptz, comment_count integer,
			   tag_slugs text[], tag_names text[], summary text)
LANGUAGE sql STABLE PARALLEL SAFE ROWS 20
AS $$
WITH p AS (
	SELECT p.id, p.slug, p.title, a.name, p.published_at, p.summary
	  FROM blog.posts p JOIN blog.authors a ON a.id = p.author_id
	 ORDER BY p.published_at DESC, p.id DESC LIMIT n),
t AS (
	SELECT pt.post_id, array_agg(t.slug ORDER BY t.id) AS slugs,
		   array_agg(t.name ORDER BY t.id) AS names
	  FROM blog.post_tags pt JOIN blog.tags t ON t.id = pt.tag_id
	 WHERE pt.post_id IN (SELECT id FROM p) GROUP BY pt.post_id),
c AS (
	SELECT post_id, count(*)::int AS n FROM blog.comments
	 WHERE post_id IN (SELECT id FROM p) GROUP BY post_id)
SELECT p.slug, p.title, p.name, p.published_at, coalesce(c.n, 0),
	   coalesce(t.slugs, '{}'), coalesce(t.names, '{}'), p.summary
  FROM p LEFT JOIN t ON t.post_id = p.id LEFT JOIN c ON c.post_id = p.id
 ORDER BY p.published_at DESC, p.id DESC
$$;

CREATE OR REPLACE FUNCTION blog_bench.post_page(slug text)
RETURNS TABLE (title text, author_name text, published_at timestamptz,
			   body text, tag_slugs text[], tag_names text[],
			   comment_authors text[], comment_bodies text[],
			   comment_times timestamptz[])
LANGUAGE sql STABLE PARALLEL SAFE ROWS 1
AS $$
SELECT p.title, a.name, p.published_at, p.body,
	   ARRAY(SELECT t.slug FROM blog.post_tags pt JOIN blog.tags t ON t.id = pt.tag_id
			  WHERE pt.post_id = p.id ORDER BY t.id),
	   ARRAY(SELECT t.name FROM blog.post_tags pt JOIN blog.tags t ON t.id = pt.tag_id
			  WHERE pt.post_id = p.id ORDER BY t.id),
	   coalesce(c.authors, '{}'), coalesce(c.bodies, '{}'), coalesce(c.times, '{}')
  FROM blog.posts p
  JOIN blog.authors a ON a.id = p.author_id
  LEFT JOIN LATERAL (
	SELECT array_agg(c.author_name ORDER BY c.created_at, c.id) AS authors,
		   array_agg(c.body ORDER BY c.created_at, c.id) AS bodies,
		   array_agg(c.created_at ORDER BY c.created_at, c.id) AS times
	  FROM blog.comments c WHERE c.post_id = p.id) c ON true
 WHERE p.slug = post_page.slug
$$;

CREATE OR REPLACE FUNCTION blog_bench.tag_page(slug text)
RETURNS TABLE (tag_name text, slug text, title text, author_name text,
			   published_at timestamptz, comment_count integer,
			   tag_slugs text[], tag_names text[], summary text)
LANGUAGE sql STABLE PARALLEL SAFE ROWS 100
AS $$
WITH p AS (
	SELECT tg.name AS tag_name, p.id, p.slug, p.title, a.name,
		   p.published_at, p.summary
	  FROM blog.tags tg
	  LEFT JOIN (blog.post_tags pt
				 JOIN blog.posts p ON p.id = pt.post_id
				 JOIN blog.authors a ON a.id = p.author_id)
		ON pt.tag_id = tg.id
	 WHERE tg.slug = tag_page.slug),
t AS (
	SELECT pt.post_id, array_agg(t.slug ORDER BY t.id) AS slugs,
		   array_agg(t.name ORDER BY t.id) AS names
	  FROM blog.post_tags pt JOIN blog.tags t ON t.id = pt.tag_id
	 WHERE pt.post_id IN (SELECT id FROM p) GROUP BY pt.post_id),
c AS (
	SELECT post_id, count(*)::int AS n FROM blog.comments
	 WHERE post_id IN (SELECT id FROM p) GROUP BY post_id)
SELECT p.tag_name, p.slug, p.title, p.name, p.published_at,
	   CASE WHEN p.id IS NOT NULL THEN coalesce(c.n, 0) END,
	   CASE WHEN p.id IS NOT NULL THEN coalesce(t.slugs, '{}') END,
	   CASE WHEN p.id IS NOT NULL THEN coalesce(t.names, '{}') END,
	   p.summary
  FROM p LEFT JOIN t ON t.post_id = p.id LEFT JOIN c ON c.post_id = p.id
 ORDER BY p.published_at DESC, p.id DESC
$$;
