-- pg_blog 1.1 by ALTER EXTENSION pg_blog UPDATE from 1.0 is pg_blog 1.1 as
-- CREATE EXTENSION makes it: the same pg_dump --schema-only (test/upgrade.sh).
\! ./test/upgrade.sh
