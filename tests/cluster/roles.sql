-- SPDX-License-Identifier: Apache-2.0
-- The cluster test's login roles, each with the least it needs, run by
-- tests/cluster/run.sh on the primary's database blog after sql/setup.sql
-- (psql variables web_pw, listen_pw, writer_pw, repl_pw: the passwords,
-- stored as SCRAM secrets since password_encryption = scram-sha-256).
--
--   blog_web     the web nodes' pool: pgblog_web, EXECUTE on the page
--                functions (setup.sql grants it)
--   blog_listen  the web nodes' cache listener: may connect and LISTEN,
--                which PostgreSQL grants to every role that may connect
--   blog_writer  a writer: pgblog_writer, EXECUTE on the write functions
--   blog_repl    the standbys' replication connections
--
-- Whichever script makes pgblog_web and pgblog_writer (the extension or
-- setup.sql), nothing here depends on it but their names.
\set ON_ERROR_STOP 1

SET password_encryption = 'scram-sha-256';

ALTER ROLE blog_web PASSWORD :'web_pw';
CREATE ROLE blog_listen LOGIN PASSWORD :'listen_pw';
CREATE ROLE blog_writer LOGIN PASSWORD :'writer_pw' IN ROLE pgblog_writer;
CREATE ROLE blog_repl LOGIN REPLICATION PASSWORD :'repl_pw';

-- PUBLIC may by default connect to every database and create temporary
-- tables in it: only the blog's roles connect, and none creates anything.
-- (PostgreSQL 15 already keeps PUBLIC from creating in the schema public.)
REVOKE ALL ON DATABASE blog FROM PUBLIC;
REVOKE ALL ON DATABASE postgres FROM PUBLIC;
REVOKE ALL ON DATABASE template1 FROM PUBLIC;
GRANT CONNECT ON DATABASE blog TO blog_web, blog_listen, blog_writer;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
