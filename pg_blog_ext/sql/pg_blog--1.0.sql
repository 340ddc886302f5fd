-- SPDX-License-Identifier: Apache-2.0
/* pg_blog 1.0: the blog's schema, its deterministic seed and the page functions */

\echo Use "CREATE EXTENSION pg_blog" to load this file. \quit

-- Tables (the data of the contract).  The schema "blog" is created by CREATE EXTENSION
-- from the control file.

CREATE TABLE blog.authors (
	id		int PRIMARY KEY,
	name	text NOT NULL
);

CREATE TABLE blog.tags (
	id		int PRIMARY KEY,
	slug	text NOT NULL UNIQUE,
	name	text NOT NULL
);

CREATE TABLE blog.posts (
	id				int PRIMARY KEY,
	author_id		int NOT NULL REFERENCES blog.authors,
	slug			text NOT NULL UNIQUE,
	title			text NOT NULL,
	summary			text NOT NULL,
	body			text NOT NULL,
	published_at	timestamptz NOT NULL
);

CREATE TABLE blog.post_tags (
	post_id	int REFERENCES blog.posts,
	tag_id	int REFERENCES blog.tags,
	PRIMARY KEY (post_id, tag_id)
);

CREATE TABLE blog.comments (
	id			int PRIMARY KEY,
	post_id		int NOT NULL REFERENCES blog.posts,
	author_name	text NOT NULL,
	body		text NOT NULL,
	created_at	timestamptz NOT NULL
);

-- The index page reads the newest posts in this order; the tag page finds
-- a tag's posts through (tag_id, post_id); the detail page reads a post's
-- comments in page order, and comment counts are index-only scans of it.
-- The primary key of post_tags already gives a post's tags in tag-id order.
CREATE INDEX posts_published_idx ON blog.posts (published_at DESC, id DESC);
CREATE INDEX post_tags_tag_idx ON blog.post_tags (tag_id, post_id);
CREATE INDEX comments_post_idx ON blog.comments (post_id, created_at, id);

-- The deterministic seed (the data of the contract), set-based.

INSERT INTO blog.authors (id, name) VALUES
	(1, 'Ada Lovelace'), (2, 'Alan Turing'), (3, 'Zoë O''Brien'),
	(4, 'Grace Hopper'), (5, 'Edsger W. Dijkstra'), (6, 'Barbara Liskov'),
	(7, '李伟'), (8, 'Donald Knuth'), (9, 'Frances "Fran" Allen'),
	(10, 'Ken & Dennis');

INSERT INTO blog.tags (id, slug, name)
SELECT i, 'tag-' || i,
	   CASE i WHEN 5 THEN 'C & C++' WHEN 12 THEN 'Zürich'
			  WHEN 21 THEN '<script>' WHEN 30 THEN '"Quoted"'
			  ELSE 'Topic ' || i END
FROM pg_catalog.generate_series(1, 30) AS i;

INSERT INTO blog.posts (id, author_id, slug, title, summary, body, published_at)
SELECT p, p % 10 + 1, 'post-' || p,
	   'Post ' || p || ': ' ||
	   (ARRAY['Getting started', 'Fish & Chips', 'Why <b>bold</b> matters',
			  '"Quoted" thoughts', 'It''s complicated', 'Café society',
			  '数据库 notes', 'Plain words'])[p % 8 + 1],
	   'A short summary of post ' || p || '.',
	   'Body of post ' || p || '. ' ||
	   pg_catalog.repeat('Lorem ipsum dolor sit amet, consectetur adipiscing elit & sed do <eiusmod> tempor. ',
						 5 + p % 10),
	   timestamptz '2025-01-01 00:00:00+00' + (p - 1) * interval '6 hours'
FROM pg_catalog.generate_series(1, 1000) AS p;

INSERT INTO blog.post_tags (post_id, tag_id)
SELECT p, (7 * p + 11 * k) % 30 + 1
FROM pg_catalog.generate_series(1, 1000) AS p,
	 pg_catalog.generate_series(0, 2) AS k
WHERE k < CASE WHEN p % 5 < 3 THEN 3 ELSE 2 END;

INSERT INTO blog.comments (id, post_id, author_name, body, created_at)
SELECT pg_catalog.row_number() OVER (ORDER BY c.p, c.k),
	   c.p,
	   (ARRAY['Reader One', 'Sam & Max', 'Jürgen', '<anon>', 'O''Hara',
			  'Quinn "Q"'])[(c.p + c.k) % 6 + 1],
	   'Comment ' || c.k || ' on post ' || c.p || ': ' ||
	   (ARRAY['Great post!', 'I disagree & here is why.',
			  'See <https://example.com>.', 'Thanks — "very" helpful.'])[c.k % 4 + 1],
	   timestamptz '2025-01-01 00:00:00+00' + (c.p - 1) * interval '6 hours'
	   + c.k * interval '1 minute'
FROM (SELECT p, k
	  FROM pg_catalog.generate_series(1, 1000) AS p,
		   LATERAL pg_catalog.generate_series(1,
				CASE WHEN p % 2 = 1 THEN p % 21 ELSE 20 - (p - 1) % 21 END) AS k) AS c;

-- The seed checks its own counts and fails loudly otherwise.
DO $$
DECLARE
	n_authors	bigint := (SELECT pg_catalog.count(*) FROM blog.authors);
	n_tags		bigint := (SELECT pg_catalog.count(*) FROM blog.tags);
	n_posts		bigint := (SELECT pg_catalog.count(*) FROM blog.posts);
	n_links		bigint := (SELECT pg_catalog.count(*) FROM blog.post_tags);
	n_comments	bigint := (SELECT pg_catalog.count(*) FROM blog.comments);
BEGIN
	IF (n_authors, n_tags, n_posts, n_links, n_comments) IS DISTINCT FROM
	   (10::bigint, 30::bigint, 1000::bigint, 2600::bigint, 10000::bigint) THEN
		RAISE EXCEPTION 'pg_blog seed produced wrong counts'
			USING ERRCODE = 'data_exception',
				  DETAIL = pg_catalog.format('Expected 10/30/1000/2600/10000 authors/tags/posts/post_tags/comments, got %s/%s/%s/%s/%s.',
											 n_authors, n_tags, n_posts, n_links, n_comments);
	END IF;
END
$$;

-- Plans made right after the seed should see its real sizes.
ANALYZE blog.authors, blog.tags, blog.posts, blog.post_tags, blog.comments;

-- pg_dump keeps the rows added after the seed; CREATE EXTENSION recreates
-- the seed itself on restore, so dumping it too would collide on the keys.
SELECT pg_catalog.pg_extension_config_dump('blog.authors', 'WHERE id > 10');
SELECT pg_catalog.pg_extension_config_dump('blog.tags', 'WHERE id > 30');
SELECT pg_catalog.pg_extension_config_dump('blog.posts', 'WHERE id > 1000');
SELECT pg_catalog.pg_extension_config_dump('blog.post_tags', 'WHERE post_id > 1000 OR tag_id > 30');
SELECT pg_catalog.pg_extension_config_dump('blog.comments', 'WHERE id > 10000');

-- The page functions.  In 1.0 each is SECURITY DEFINER; they run no SQL
-- (they read the tables by index, below the executor) and open every
-- relation by name in the schema blog, which makes them independent of the
-- caller's search_path without the cost of a per-call SET clause.  1.1
-- makes them SECURITY INVOKER (pg_blog--1.0--1.1.sql says why).

CREATE FUNCTION blog.index_page(n integer DEFAULT 20)
RETURNS TABLE (slug text, title text, author_name text,
			   published_at timestamptz, comment_count integer,
			   tag_slugs text[], tag_names text[], summary text)
AS 'MODULE_PATHNAME', 'blog_index_page'
LANGUAGE C STABLE STRICT PARALLEL SAFE SECURITY DEFINER
ROWS 20;

CREATE FUNCTION blog.post_page(slug text)
RETURNS TABLE (title text, author_name text, published_at timestamptz,
			   body text, tag_slugs text[], tag_names text[],
			   comment_authors text[], comment_bodies text[],
			   comment_times timestamptz[])
AS 'MODULE_PATHNAME', 'blog_post_page'
LANGUAGE C STABLE STRICT PARALLEL SAFE SECURITY DEFINER
ROWS 1;

CREATE FUNCTION blog.tag_page(slug text)
RETURNS TABLE (tag_name text, slug text, title text, author_name text,
			   published_at timestamptz, comment_count integer,
			   tag_slugs text[], tag_names text[], summary text)
AS 'MODULE_PATHNAME', 'blog_tag_page'
LANGUAGE C STABLE STRICT PARALLEL SAFE SECURITY DEFINER
ROWS 100;

COMMENT ON FUNCTION blog.index_page(integer) IS
	'the n latest posts as index-page cards';
COMMENT ON FUNCTION blog.post_page(text) IS
	'one post with its tags and all its comments, oldest first';
COMMENT ON FUNCTION blog.tag_page(text) IS
	'a tag and the cards of every post that carries it, newest first';

REVOKE ALL ON FUNCTION blog.index_page(integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.post_page(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.tag_page(text) FROM PUBLIC;

-- EXECUTE on them goes to no role here: an extension creates nothing
-- outside its database, and roles are the cluster's.  The site's set-up
-- (sql/setup.sql of the repository) creates the web server's role and
-- grants it EXECUTE on these three functions and USAGE on the schema.
