-- SPDX-License-Identifier: Apache-2.0
-- Every page of the blog, one digest per page function over all its pages
-- (rows as text, in UTC), into the psql variables :md5_to index_md5,
-- post_md5 and tag_md5 (\gset's prefix).
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SELECT
	(SELECT md5(string_agg(p::text, E'\n' ORDER BY p.ordinality))
	 FROM blog.index_page(1000) WITH ORDINALITY AS p) AS index_md5,
	(SELECT md5(string_agg(p::text, E'\n' ORDER BY i, p.ordinality))
	 FROM generate_series(1, 1000) AS i,
		  blog.post_page('post-' || i) WITH ORDINALITY AS p) AS post_md5,
	(SELECT md5(string_agg(p::text, E'\n' ORDER BY i, p.ordinality))
	 FROM generate_series(1, 30) AS i,
		  blog.tag_page('tag-' || i) WITH ORDINALITY AS p) AS tag_md5
\gset :md5_to
