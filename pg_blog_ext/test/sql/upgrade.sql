-- pg_blog 1.2 by ALTER EXTENSION pg_blog UPDATE from 1.0 (through 1.1) and
-- from 1.1 is pg_blog 1.2 as CREATE EXTENSION makes it: the same pg_dump
-- --schema-only (test/upgrade.sh), tables, triggers, functions and grants.
\! ./test/upgrade.sh
