-- SPDX-License-Identifier: Apache-2.0
-- A site's web role under this suite's name, made and granted as
-- sql/setup.sql of the repository makes and grants pgblog_web: EXECUTE on
-- the three page functions.  A test that includes it drops it at its end.
CREATE ROLE regress_pgblog_web NOLOGIN;
GRANT USAGE ON SCHEMA blog TO regress_pgblog_web;
GRANT EXECUTE ON FUNCTION blog.index_page(integer) TO regress_pgblog_web;
GRANT EXECUTE ON FUNCTION blog.post_page(text) TO regress_pgblog_web;
GRANT EXECUTE ON FUNCTION blog.tag_page(text) TO regress_pgblog_web;
