-- SPDX-License-Identifier: Apache-2.0
-- The page functions written as single LANGUAGE sql statements, for
-- comparison with the C functions.  Not SECURITY DEFINER, so that the
-- planner may inline them (its best case); a deployed version would need
-- SECURITY DEFINER, which forbids inlining.  Not STRICT either: a strict
-- set-returning SQL function is never inlined.  They read the comment
-- counts and tag ids kept on the posts (1.3), as the C functions do.
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS blog_bench;

CREATE OR REPLACE FUNCTION blog_bench.index_page(n integer DEFAULT 20)
RETURNS TABLE (slug text, title text, author_name text,
			   published_at timestamptz, comment_count integer,
			   tag_slugs text[], tag_names text[], summary text)
LANGUAGE sql STABLE PARALLEL SAFE ROWS 20
AS $$
SELECT p.slug, p.title, a.name, p.published_at, p.comment_count,
	   ARRAY(SELECT t.slug FROM blog.tags t WHERE t.id = ANY (p.tag_ids) ORDER BY t.id),
	   ARRAY(SELECT t.name FROM blog.tags t WHERE t.id = ANY (p.tag_ids) ORDER BY t.id),
	   p.summary
  FROM blog.posts p JOIN blog.authors a ON a.id = p.author_id
 ORDER BY p.published_at DESC, p.id DESC LIMIT n
$$;

CREATE OR REPLACE FUNCTION blog_bench.post_page(slug text)
RETURNS TABLE (title text, author_name text, published_at timestamptz,
			   body text, tag_slugs text[], tag_names text[],
			   comment_authors text[], comment_bodies text[],
			   comment_times timestamptz[])
LANGUAGE sql STABLE PARALLEL SAFE ROWS 1
AS $$
SELECT p.title, a.name, p.published_at, p.body,
	   ARRAY(SELECT t.slug FROM blog.tags t WHERE t.id = ANY (p.tag_ids) ORDER BY t.id),
	   ARRAY(SELECT t.name FROM blog.tags t WHERE t.id = ANY (p.tag_ids) ORDER BY t.id),
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

-- A tag without posts gives one row, its name, every other column NULL.
CREATE OR REPLACE FUNCTION blog_bench.tag_page(slug text)
RETURNS TABLE (tag_name text, slug text, title text, author_name text,
			   published_at timestamptz, comment_count integer,
			   tag_slugs text[], tag_names text[], summary text)
LANGUAGE sql STABLE PARALLEL SAFE ROWS 100
AS $$
SELECT tg.name, p.slug, p.title, a.name, p.published_at, p.comment_count,
	   CASE WHEN p.id IS NOT NULL THEN
		   ARRAY(SELECT t.slug FROM blog.tags t WHERE t.id = ANY (p.tag_ids) ORDER BY t.id) END,
	   CASE WHEN p.id IS NOT NULL THEN
		   ARRAY(SELECT t.name FROM blog.tags t WHERE t.id = ANY (p.tag_ids) ORDER BY t.id) END,
	   p.summary
  FROM blog.tags tg
  LEFT JOIN (blog.post_tags pt
			 JOIN blog.posts p ON p.id = pt.post_id
			 JOIN blog.authors a ON a.id = p.author_id)
	ON pt.tag_id = tg.id
 WHERE tg.slug = tag_page.slug
 ORDER BY p.published_at DESC, p.id DESC
$$;
