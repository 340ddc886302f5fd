-- SPDX-License-Identifier: Apache-2.0
-- The suite's own set-up, made from this folder alone whatever the
-- cluster's defaults, as contrib's tests make theirs: the roles a test
-- needs are made by that test (regress_*) and dropped at its end; this
-- test sets what every later session of the suite's database assumes.
--
-- client_encoding UTF8: the seed's names are UTF-8, and psql aligns its
-- columns by the characters of the client encoding, which is otherwise the
-- database's (on SQL_ASCII it would count bytes).  (pg_regress itself sets
-- lc_messages and the other lc_* to C on the database.)
--
-- Then the tables' visibility map and statistics, which the page
-- functions' index-only reads use (a site's set-up runs the same VACUUM).
-- The VACUUM can mark a page all-visible only once the seed's commit is
-- flushed: on a cluster with synchronous_commit = off it may not be yet,
-- and a synchronous commit before it flushes everything up to its own.
SET synchronous_commit = on;
ALTER DATABASE :"DBNAME" SET client_encoding = 'UTF8';
VACUUM (ANALYZE);
SELECT extname, extversion FROM pg_extension WHERE extname = 'pg_blog';
