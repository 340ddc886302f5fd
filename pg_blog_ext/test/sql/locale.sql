-- SPDX-License-Identifier: Apache-2.0
-- The extension in a database whose collation folds case otherwise than
-- ASCII does: ICU's Turkish, where upper('insert') is 'İNSERT'.  No SQL
-- that the scripts build or run may depend on the database's collation:
-- CREATE EXTENSION (1.0's script and every update) and the update from
-- 1.2 make the same triggers there, which keep the posts' copies, and the
-- pages are those of the suite's own database.  Needs a PostgreSQL built
-- with ICU (Debian's is); without it the test says so and stops
-- (expected/locale_1.out).
SELECT EXISTS (SELECT FROM pg_collation WHERE collprovider = 'i') AS has_icu
\gset
\if :has_icu
\else
\echo 'this PostgreSQL has no ICU'
\quit
\endif

-- The pages of the suite's database (PG_ABS_SRCDIR: pg_regress's
-- --inputdir, test/)
\getenv abs_srcdir PG_ABS_SRCDIR
\set pages_md5 :abs_srcdir '/include/pages_md5.sql'
\set md5_to suite_
\i :pages_md5
SELECT current_database() AS suite_db \gset

SET client_min_messages = warning;
DROP DATABASE IF EXISTS pg_blog_regress_tr;
CREATE DATABASE pg_blog_regress_tr TEMPLATE template0 ENCODING 'UTF8'
	LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE 'tr';
\c pg_blog_regress_tr
SET client_min_messages = warning;
-- the trap is real here
SELECT upper('insert') AS upper_insert, upper('insert' COLLATE "C") AS in_c;

-- What each way to 1.3 must give: the version, the triggers that keep the
-- posts' copies, a comment counted by them, and every page as in the
-- suite's database.
CREATE FUNCTION pg_temp.triggers() RETURNS SETOF text
LANGUAGE sql AS $$
	SELECT pg_get_triggerdef(t.oid)
	FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname = 'blog' AND t.tgname LIKE 'copies\_%'
	ORDER BY c.relname COLLATE "C", t.tgname COLLATE "C"
$$;
\set md5_to tr_
\set checks 'SELECT extversion FROM pg_extension WHERE extname = ''pg_blog''; SELECT * FROM pg_temp.triggers(); BEGIN; SELECT blog.add_comment(''post-31'', ''Reader'', ''Counted'') AS comment_id; SELECT comment_count FROM blog.index_page(1000) WHERE slug = ''post-31''; ROLLBACK; \\i :pages_md5'
\set same 'SELECT :''tr_index_md5'' = :''suite_index_md5'' AS same_index, :''tr_post_md5'' = :''suite_post_md5'' AS same_posts, :''tr_tag_md5'' = :''suite_tag_md5'' AS same_tags;'

CREATE EXTENSION pg_blog;
:checks
:same

DROP EXTENSION pg_blog;
CREATE EXTENSION pg_blog VERSION '1.2';
ALTER EXTENSION pg_blog UPDATE;
:checks
:same

\c :suite_db
SET client_min_messages = warning;
DROP DATABASE pg_blog_regress_tr;
