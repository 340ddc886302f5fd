-- SPDX-License-Identifier: Apache-2.0
/* pg_blog 1.0 -> 1.1: the page functions run as their caller; covering indexes */

\echo Use "ALTER EXTENSION pg_blog UPDATE TO '1.1'" to load this file. \quit

-- The page functions run no SQL: they read the tables below the executor,
-- by index, where no table privilege is checked, so they need no owner's
-- rights and run as their caller (SECURITY INVOKER, as contrib's
-- pgstattuple and pg_visibility do); EXECUTE on them, granted only to the
-- web server's role (by the site's set-up), is the right to read what the
-- pages show, and no table is granted to anyone.  They find every relation
-- by name in the schema blog and call no operator or function by name, so
-- the caller's search_path cannot redirect them and no per-call SET
-- search_path is needed.
ALTER FUNCTION blog.index_page(integer) SECURITY INVOKER;
ALTER FUNCTION blog.post_page(text) SECURITY INVOKER;
ALTER FUNCTION blog.tag_page(text) SECURITY INVOKER;

-- Covering indexes for the rows the pages read by key: with the heap page
-- all-visible (after the seed's VACUUM), an author's name, a tag's slug and
-- name and a post card's columns come from the index entry alone, without
-- a heap fetch per key.  Unique like the primary keys they copy.
CREATE UNIQUE INDEX authors_name_idx ON blog.authors (id) INCLUDE (name);
CREATE UNIQUE INDEX tags_text_idx ON blog.tags (id) INCLUDE (slug, name);
CREATE UNIQUE INDEX posts_card_idx ON blog.posts (id)
	INCLUDE (author_id, slug, title, summary, published_at);
