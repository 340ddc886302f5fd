-- SPDX-License-Identifier: Apache-2.0
-- Render the reference pages from the page functions' rows, following
-- the contract's pages, and compare their SHA-256 with tests/golden/MANIFEST
-- (the view golden.pages).
-- Equal hashes mean the rows carry exactly what the pages need, in order.
CREATE SCHEMA golden;

CREATE FUNCTION golden.esc(s text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT replace(replace(replace(replace(replace(s, '&', '&amp;'), '<', '&lt;'),
				   '>', '&gt;'), '"', '&#34;'), '''', '&#39;')
$$;

CREATE FUNCTION golden.dt(t timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
	SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI')
$$;

CREATE FUNCTION golden.ncomments(n int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN n = 1 THEN '1 comment' ELSE n || ' comments' END
$$;

CREATE FUNCTION golden.taglist(slugs text[], names text[]) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT '<ul class="tags">' ||
		   string_agg('<li><a href="/tag/' || golden.esc(s) || '">' || golden.esc(n) || '</a></li>', '' ORDER BY i) ||
		   '</ul>'
	FROM unnest(slugs, names) WITH ORDINALITY AS u(s, n, i)
$$;

CREATE FUNCTION golden.card(slug text, title text, author text, pub timestamptz, n int,
							slugs text[], names text[], summary text)
RETURNS text LANGUAGE sql STABLE AS $$
	SELECT E'<article>\n<h2><a href="/post/' || golden.esc(slug) || '">' || golden.esc(title) || E'</a></h2>\n' ||
		   '<p class="meta">by ' || golden.esc(author) || ' on ' || golden.dt(pub) || ' · ' || golden.ncomments(n) || E'</p>\n' ||
		   golden.taglist(slugs, names) || E'\n<p>' || golden.esc(summary) || E'</p>\n</article>\n'
$$;

CREATE FUNCTION golden.layout(title text, content text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT E'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>' || title ||
		   E' · Blog</title>\n</head>\n<body>\n<header><a href="/">Blog</a></header>\n<main>\n' ||
		   content || E'</main>\n</body>\n</html>\n'
$$;

CREATE FUNCTION golden.index_html() RETURNS text LANGUAGE sql STABLE AS $$
	SELECT golden.layout('Latest posts', E'<h1>Latest posts</h1>\n' ||
		   string_agg(golden.card(slug, title, author_name, published_at, comment_count,
								  tag_slugs, tag_names, summary), '' ORDER BY i))
	FROM blog.index_page(20) WITH ORDINALITY AS r(slug, title, author_name, published_at,
		 comment_count, tag_slugs, tag_names, summary, i)
$$;

CREATE FUNCTION golden.tag_html(s text) RETURNS text LANGUAGE sql STABLE AS $$
	SELECT golden.layout('Posts tagged ' || golden.esc(min(tag_name)),
		   '<h1>Posts tagged ' || golden.esc(min(tag_name)) || E'</h1>\n' ||
		   coalesce(string_agg(golden.card(slug, title, author_name, published_at, comment_count,
										   tag_slugs, tag_names, summary), '' ORDER BY i), ''))
	FROM blog.tag_page(s) WITH ORDINALITY AS r(tag_name, slug, title, author_name, published_at,
		 comment_count, tag_slugs, tag_names, summary, i)
$$;

CREATE FUNCTION golden.post_html(s text) RETURNS text LANGUAGE sql STABLE AS $$
	SELECT golden.layout(golden.esc(p.title),
		   E'<article>\n<h1>' || golden.esc(p.title) || E'</h1>\n' ||
		   '<p class="meta">by ' || golden.esc(p.author_name) || ' on ' || golden.dt(p.published_at) || E'</p>\n' ||
		   golden.taglist(p.tag_slugs, p.tag_names) ||
		   E'\n<div class="body">' || golden.esc(p.body) || E'</div>\n</article>\n' ||
		   E'<section class="comments">\n<h2>' || golden.ncomments(cardinality(p.comment_authors)) || E'</h2>\n' ||
		   coalesce((SELECT string_agg(E'<div class="comment">\n<p class="meta">' || golden.esc(a) || ' on ' ||
									   golden.dt(t) || E'</p>\n<p>' || golden.esc(b) || E'</p>\n</div>\n', '' ORDER BY i)
					 FROM unnest(p.comment_authors, p.comment_bodies, p.comment_times)
						  WITH ORDINALITY AS c(a, b, t, i)), '') ||
		   E'</section>\n')
	FROM blog.post_page(s) p
$$;

CREATE FUNCTION golden.sha(html text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT encode(sha256(convert_to(html, getdatabaseencoding())), 'hex')
$$;

-- The hashes are copied from tests/golden/MANIFEST.
CREATE VIEW golden.pages AS
SELECT page, golden.sha(html) = expected AS identical, octet_length(html) AS bytes
FROM (VALUES
	('/', golden.index_html(), 'd03b7953bf8e173dfeab35a0528d6256690eb01b4ad99389ff6c052af9e36da6'),
	('/post/post-1', golden.post_html('post-1'), '35b4040217d18b0bf96e3358205763def73b796642694b20d73d1e3918324d19'),
	('/post/post-2', golden.post_html('post-2'), '8239eb8510ff7a6fb8c50757cb48f039785bbd7102ebb2cb4dd8571dcbdcf0d7'),
	('/post/post-21', golden.post_html('post-21'), 'd62a0de3b7c175e2a9f2ebdae900911037cf670d6936d2f6066bb1d89d97c236'),
	('/post/post-31', golden.post_html('post-31'), 'b2e15faad2bf59c6a53644dca6909540207882d706566e80b05dc2809f661079'),
	('/post/post-1000', golden.post_html('post-1000'), '99626c41b5bfa0e240c9ea2717daff7c3fffde9aff3c29ce2f9b87f3320f6aec'),
	('/tag/tag-5', golden.tag_html('tag-5'), '87486877b90f238cdef9637584b323fea0ab63cf08f3d4b87291d13e5eeb71a6'),
	('/tag/tag-7', golden.tag_html('tag-7'), 'bc4fb5bd48a4e2b342f9be29fda23003a4b5540c4f08df9f37c38fb7ac0fac5c'),
	('/tag/tag-21', golden.tag_html('tag-21'), '5ed6535d91345735d30be1902d953bb9afbdbd0375a2fac3c81623585dc75da3')
) AS g(page, html, expected);

SELECT * FROM golden.pages;

-- The schema golden stays for the test versions, which renders the pages
-- from the rows of every schema version, then drops it.
