-- SPDX-License-Identifier: Apache-2.0
-- A fresh database for the blog: the extension brings the schema, the seed
-- and the page and write functions; this script adds what an extension must
-- not create, the cluster's roles, and their grants.  Run it as a superuser
-- in the database (psql -d blog -f setup.sql); running it again is harmless.
--
--   pgblog_web     NOLOGIN: EXECUTE on the three page functions
--   pgblog_writer  NOLOGIN: EXECUTE on the four write functions
--   blog_web       LOGIN, member of pgblog_web: the web server's login
--
-- Roles are cluster-wide: they outlive DROP EXTENSION and DROP DATABASE.
-- docs/INSTALL.md's "Removing it" drops them.

-- The VACUUM at the end can mark a page all-visible only once the seed's
-- commit is flushed: with an asynchronous commit (a cluster set to
-- synchronous_commit = off, as the private stack is) it would find the rows'
-- hint bits unset and leave most pages of posts, authors and tags to be
-- read from the heap by every index-only scan until a later vacuum.
SET synchronous_commit = on;

CREATE EXTENSION IF NOT EXISTS pg_blog;

-- An existing role is reused: another database of the cluster may hold a
-- blog too.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'pgblog_web') THEN
        CREATE ROLE pgblog_web NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'pgblog_writer') THEN
        CREATE ROLE pgblog_writer NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'blog_web') THEN
        CREATE ROLE blog_web LOGIN;
    END IF;
END
$$;

-- The page functions are the web role's only right: no table is granted
-- (the functions read below the executor, where no table privilege is
-- checked, and run as their caller).
GRANT USAGE ON SCHEMA blog TO pgblog_web;
GRANT EXECUTE ON FUNCTION blog.index_page(integer) TO pgblog_web;
GRANT EXECUTE ON FUNCTION blog.post_page(text) TO pgblog_web;
GRANT EXECUTE ON FUNCTION blog.tag_page(text) TO pgblog_web;

-- The writers' role: the four write functions, which run as their owner.
GRANT USAGE ON SCHEMA blog TO pgblog_writer;
GRANT EXECUTE ON FUNCTION blog.publish_post(integer, text, text, text, text, text[], timestamptz) TO pgblog_writer;
GRANT EXECUTE ON FUNCTION blog.edit_post(text, text, text, text, text[]) TO pgblog_writer;
GRANT EXECUTE ON FUNCTION blog.add_comment(text, text, text) TO pgblog_writer;
GRANT EXECUTE ON FUNCTION blog.delete_comment(integer) TO pgblog_writer;

GRANT pgblog_web TO blog_web;

-- Set the tables' visibility map and statistics now rather than whenever
-- autovacuum gets to them: the page functions scan indexes, and a heap
-- fetch per row until then would slow every page.
VACUUM (ANALYZE);
