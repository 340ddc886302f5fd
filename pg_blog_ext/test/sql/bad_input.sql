-- SPDX-License-Identifier: Apache-2.0
-- Unknown and malformed slugs return no rows; nothing crashes.
-- Invisible characters are given as their UTF-8 bytes: a Unicode escape
-- (E'\u200b') is refused by a database that is not UTF8 (SQL_ASCII), which
-- keeps the bytes as they are.
CREATE FUNCTION pg_temp.utf8(bytes bytea) RETURNS text
LANGUAGE sql AS $$ SELECT convert_from(bytes, getdatabaseencoding()) $$;
CREATE TEMP TABLE bad (label text, slug text);
INSERT INTO bad VALUES
	('null', NULL),
	('empty', ''),
	('10000 chars', repeat('a', 10000)),
	('65 chars', repeat('a', 65)),
	('64 chars, unknown', repeat('a', 64)),
	('unknown', 'no-such-post'),
	('upper case', 'POST-31'),
	('trailing space', 'post-31 '),
	('leading space', ' post-31'),
	('newline', E'post-31\n'),
	('tab', E'post-31\t'),
	('quote', 'post-31'''),
	('double quote', 'post-31"'),
	('sql fragment', 'post-31'' OR ''1''=''1'),
	('sql comment', 'post-31--'),
	('sql statement', 'x''; DROP TABLE blog.posts; --'),
	('percent', 'post%2D31'),
	('like pattern', 'post-3_'),
	('like wildcard', 'post-%'),
	('regex', 'post-.*'),
	('slash', 'post/31'),
	('dot segments', '../post-31'),
	('backslash', E'post-31\\'),
	('unicode', 'pöst-31'),
	('cjk', '数据库'),
	('emoji', 'post-😀'),
	('fullwidth digits', 'post-３１'),
	('combining mark', 'post-31' || pg_temp.utf8('\xcc81')),          -- U+0301
	('zero width space', 'post' || pg_temp.utf8('\xe2808b') || '-31'), -- U+200B
	('right-to-left mark', pg_temp.utf8('\xe2808f') || 'post-31'),     -- U+200F
	('tag for a post', 'tag-7x'),
	('64 valid chars of a tag', 'tag-' || repeat('7', 60));

SELECT label,
	   (SELECT count(*) FROM blog.post_page(b.slug)) AS post_rows,
	   (SELECT count(*) FROM blog.tag_page(b.slug)) AS tag_rows
FROM bad b ORDER BY label;

-- A 10000-character value stored in a table (so toasted) is rejected too.
CREATE TEMP TABLE big AS SELECT repeat('post-1', 100000) AS slug;
SELECT count(*) FROM big, LATERAL blog.post_page(big.slug);
SELECT count(*) FROM big, LATERAL blog.tag_page(big.slug);

-- The well-formed neighbours do return a row.
SELECT count(*) FROM blog.post_page('post-31');
SELECT count(*) FROM blog.tag_page('tag-7');

-- index_page: NULL, zero and negative sizes give no rows; a huge one is capped by the data.
SELECT count(*) FROM blog.index_page(NULL);
SELECT count(*) FROM blog.index_page(0);
SELECT count(*) FROM blog.index_page(-1);
SELECT count(*) FROM blog.index_page(-2147483648);
SELECT count(*) FROM blog.index_page(2147483647);
SELECT count(*) FROM blog.index_page(1);

-- Called as a plain expression in the select list, not in FROM.
SELECT blog.post_page('post-21') IS NOT NULL AS target_list_call;
SELECT count(*) FROM (SELECT blog.index_page(3)) s;

-- A type mismatch is a clear error, not a crash.
SELECT * FROM blog.post_page(31);
