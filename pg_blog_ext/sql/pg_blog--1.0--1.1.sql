/* pg_blog 1.0 -> 1.1 */

\echo Use "ALTER EXTENSION pg_blog UPDATE TO '1.1'" to load this file. \quit

-- The page functions read the tables below the executor, where no table
-- privilege is checked: they need no owner's rights, so they run as their
-- caller, and EXECUTE (granted by the site's set-up only) stays the one
-- right to what the pages show.  See pg_blog--1.2.sql.
ALTER FUNCTION blog.index_page(integer) SECURITY INVOKER;
ALTER FUNCTION blog.post_page(text) SECURITY INVOKER;
ALTER FUNCTION blog.tag_page(text) SECURITY INVOKER;

-- Covering indexes for the rows the pages read by key (index-only reads on
-- all-visible pages); see pg_blog--1.2.sql.
CREATE UNIQUE INDEX authors_name_idx ON blog.authors (id) INCLUDE (name);
CREATE UNIQUE INDEX tags_text_idx ON blog.tags (id) INCLUDE (slug, name);
CREATE UNIQUE INDEX posts_card_idx ON blog.posts (id)
	INCLUDE (author_id, slug, title, summary, published_at);
