-- A fresh database for the blog: the extension brings the schema, the seed
-- and the page functions; the web server logs in as blog_web, which may only
-- call the page functions (through the extension's role pgblog_web).

-- The VACUUM at the end can mark a page all-visible only once the seed's
-- commit is flushed: with an asynchronous commit (a cluster set to
-- synchronous_commit = off, as the private stack is) it would find the rows'
-- hint bits unset and leave most pages of posts, authors and tags to be
-- read from the heap by every index-only scan until a later vacuum.
SET synchronous_commit = on;

CREATE EXTENSION IF NOT EXISTS pg_blog;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'blog_web') THEN
        CREATE ROLE blog_web LOGIN;
    END IF;
END
$$;
GRANT pgblog_web TO blog_web;

-- Set the tables' visibility map and statistics now rather than whenever
-- autovacuum gets to them: the page functions scan indexes, and a heap
-- fetch per row until then would slow every page.
VACUUM (ANALYZE);
