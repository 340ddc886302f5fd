-- SPDX-License-Identifier: Apache-2.0
-- What versions.sql checks of each version, through its pg_temp functions:
-- the golden pages before a VACUUM and after it, the indexes of blog that
-- three pages read, and writes with plain SQL seen by the next pages.
SELECT * FROM pg_temp.golden();
VACUUM (ANALYZE);
SELECT * FROM pg_temp.golden();
SELECT pg_stat_force_next_flush();
SELECT pg_temp.read_pages();
SELECT pg_temp.indexes_read();
SELECT * FROM pg_temp.writes_seen();
