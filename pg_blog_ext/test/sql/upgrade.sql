-- SPDX-License-Identifier: Apache-2.0
-- pg_blog by ALTER EXTENSION pg_blog UPDATE from 1.0, 1.1 and 1.2 is
-- pg_blog as CREATE EXTENSION makes it: the same pg_dump --schema-only
-- (test/upgrade.sh), tables, triggers, functions and grants.
\! ./test/upgrade.sh
