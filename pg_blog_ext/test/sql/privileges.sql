-- SPDX-License-Identifier: Apache-2.0
-- The web role may call the page functions and nothing else.  The roles
-- are this test's, made and granted as a site's set-up makes pgblog_web and
-- blog_web (sql/setup.sql of the repository), and dropped at its end; the
-- web role by test/include/web_role.sql, which writes.sql includes too
-- (PG_ABS_SRCDIR: pg_regress's --inputdir, test/).
\getenv abs_srcdir PG_ABS_SRCDIR
\set web_role :abs_srcdir '/include/web_role.sql'
\i :web_role

SELECT p.proname,
	   has_function_privilege('regress_pgblog_web', p.oid, 'EXECUTE') AS web_execute,
	   has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
FROM pg_proc p WHERE p.pronamespace = 'blog'::regnamespace ORDER BY 1;

SELECT c.relname,
	   has_table_privilege('regress_pgblog_web', c.oid, 'SELECT') AS sel,
	   has_table_privilege('regress_pgblog_web', c.oid, 'INSERT') AS ins,
	   has_table_privilege('regress_pgblog_web', c.oid, 'UPDATE') AS upd,
	   has_table_privilege('regress_pgblog_web', c.oid, 'DELETE') AS del
FROM pg_class c WHERE c.relnamespace = 'blog'::regnamespace AND c.relkind = 'r' ORDER BY 1;

-- A login role for the web server, as a site creates it.
CREATE ROLE regress_blog_web LOGIN IN ROLE regress_pgblog_web;
CREATE ROLE regress_blog_nobody LOGIN;

SET ROLE regress_blog_web;
SELECT count(*) FROM blog.index_page(20);
SELECT title FROM blog.post_page('post-31');
SELECT count(*) FROM blog.tag_page('tag-7');
SELECT count(*) FROM blog.posts;
SELECT * FROM blog.comments LIMIT 1;
COPY blog.authors TO STDOUT;
INSERT INTO blog.tags VALUES (99, 'tag-99', 'x');
UPDATE blog.posts SET title = 'x' WHERE id = 1;
DELETE FROM blog.comments;
CREATE TABLE blog.evil (i int);
RESET ROLE;

-- A role outside regress_pgblog_web cannot call the functions.  It is given USAGE
-- on the schema, so that the one right it lacks is EXECUTE, which the
-- extension revokes from PUBLIC.
GRANT USAGE ON SCHEMA blog TO regress_blog_nobody;
SELECT has_schema_privilege('regress_blog_nobody', 'blog', 'USAGE') AS usage,
	   has_function_privilege('regress_blog_nobody', 'blog.post_page(text)', 'EXECUTE') AS execute;
SET ROLE regress_blog_nobody;
SELECT count(*) FROM blog.index_page(20);
SELECT * FROM blog.post_page('post-31');
SELECT * FROM blog.tag_page('tag-7');
SELECT count(*) FROM blog.posts;
RESET ROLE;

-- EXECUTE is what refused it: granted EXECUTE on one function, the same
-- role reads that page, and still neither the other pages nor a table.
GRANT EXECUTE ON FUNCTION blog.post_page(text) TO regress_blog_nobody;
SET ROLE regress_blog_nobody;
SELECT title FROM blog.post_page('post-31');
SELECT count(*) FROM blog.index_page(20);
SELECT title FROM blog.posts WHERE id = 31;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION blog.post_page(text) FROM regress_blog_nobody;
REVOKE USAGE ON SCHEMA blog FROM regress_blog_nobody;

-- The functions run as their caller (no SECURITY DEFINER): what the web
-- role reads through them, it reads without any right on the tables.
SELECT p.proname, p.prosecdef FROM pg_proc p
WHERE p.pronamespace = 'blog'::regnamespace AND p.proname LIKE '%\_page' ORDER BY 1;

-- Nothing changed.
SELECT count(*) FROM blog.comments;
SELECT title FROM blog.posts WHERE id = 1;

DROP ROLE regress_blog_web;
DROP ROLE regress_blog_nobody;
DROP OWNED BY regress_pgblog_web;
DROP ROLE regress_pgblog_web;
