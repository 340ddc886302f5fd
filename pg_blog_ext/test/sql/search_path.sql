-- A caller's search_path cannot redirect anything the page functions do.
-- The schema "evil" comes before pg_catalog and defines operators,
-- functions and tables with the names the functions' queries use.
CREATE SCHEMA evil;
CREATE TABLE evil.calls (what text);

CREATE FUNCTION evil.trap(a anyelement, b anyelement) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	-- quietly wrong rather than loud, so that a hijack shows as wrong rows
	INSERT INTO evil.calls VALUES ('operator ' || pg_typeof(a)::text);
	RETURN false;
END
$$;
CREATE FUNCTION evil.trap_text(a text, b text) RETURNS boolean
LANGUAGE sql AS 'SELECT evil.trap(a, b)';
CREATE FUNCTION evil.trap_int(a int, b int) RETURNS boolean
LANGUAGE sql AS 'SELECT evil.trap(a, b)';
CREATE FUNCTION evil.trap_ts(a timestamptz, b timestamptz) RETURNS boolean
LANGUAGE sql AS 'SELECT evil.trap(a, b)';

CREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.trap_text);
CREATE OPERATOR evil.= (LEFTARG = int, RIGHTARG = int, FUNCTION = evil.trap_int);
CREATE OPERATOR evil.< (LEFTARG = timestamptz, RIGHTARG = timestamptz, FUNCTION = evil.trap_ts);
CREATE OPERATOR evil.> (LEFTARG = timestamptz, RIGHTARG = timestamptz, FUNCTION = evil.trap_ts);

CREATE FUNCTION evil.count(anyelement) RETURNS bigint
LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'evil count called'; END $$;
CREATE FUNCTION evil.array_agg(text) RETURNS text[]
LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'evil array_agg called'; END $$;

CREATE TABLE evil.posts (LIKE blog.posts);
CREATE TABLE evil.tags (LIKE blog.tags);
CREATE TABLE evil.comments (LIKE blog.comments);
CREATE TABLE evil.post_tags (LIKE blog.post_tags);
CREATE TABLE evil.authors (LIKE blog.authors);
INSERT INTO evil.posts SELECT * FROM blog.posts WHERE id = 31;
UPDATE evil.posts SET title = 'hijacked';

-- Temporary tables are searched first for relations by default.
CREATE TEMP TABLE posts (LIKE blog.posts);
INSERT INTO posts SELECT * FROM blog.posts WHERE id = 31;
UPDATE posts SET title = 'hijacked by a temp table';

SET search_path = evil, pg_catalog, public;

-- The attack is real: unqualified SQL resolves to the evil objects.
SELECT 'a'::text = 'a'::text AS text_eq, 1 = 1 AS int_eq;
SELECT what, count(*) FROM evil.calls GROUP BY what ORDER BY what;
DELETE FROM evil.calls;

-- The page functions are unaffected, in this fresh session and after
-- their plans are cached.
SELECT title FROM blog.post_page('post-31');
SELECT pg_catalog.count(*) FROM blog.index_page(20);
SELECT pg_catalog.count(*) FROM blog.tag_page('tag-7');
SELECT title FROM blog.post_page('post-31');
SELECT pg_catalog.count(*) FROM blog.tag_page('tag-7');

SELECT title, tag_names, comment_bodies[10] FROM blog.post_page('post-31');

-- An empty search_path, and pg_temp placed first.
SET search_path = '';
SELECT pg_catalog.count(*) FROM blog.index_page(20);
SET search_path = pg_temp, evil, pg_catalog;
SELECT title FROM blog.post_page('post-31');

RESET search_path;
SELECT count(*) AS evil_calls FROM evil.calls;

SET client_min_messages = warning;
DROP SCHEMA evil CASCADE;
