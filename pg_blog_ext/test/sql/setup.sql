-- The extension creates no role: the site's set-up, sql/setup.sql of the
-- repository, makes the roles and grants that the tests privileges and
-- writes check (the path is the tests' working directory, pg_blog_ext).
-- Run twice, as a site may: the second run changes nothing.
SET client_min_messages = warning;
\i ../sql/setup.sql
\i ../sql/setup.sql
RESET client_min_messages;
SELECT rolname, rolcanlogin, rolsuper, rolinherit
FROM pg_roles WHERE rolname IN ('pgblog_web', 'pgblog_writer', 'blog_web')
ORDER BY 1;
SELECT pg_has_role('blog_web', 'pgblog_web', 'MEMBER') AS web_member,
	   pg_has_role('blog_web', 'pgblog_writer', 'MEMBER') AS writer_member;
