-- SPDX-License-Identifier: Apache-2.0
/* pg_blog 1.1 -> 1.2: the write functions and the cache triggers */

\echo Use "ALTER EXTENSION pg_blog UPDATE TO '1.2'" to load this file. \quit

-- Writes (1.2).  A blog's writes as functions for the role pgblog_writer,
-- and triggers that name, on every change to the five tables, the cached
-- pages it makes stale.
--
-- The write functions are PL/pgSQL: a write costs a commit and a NOTIFY,
-- not the few statements around them, so C would buy nothing here, while
-- PL/pgSQL's RAISE gives each refusal its errcode and message.  They run
-- as their owner (SECURITY DEFINER) so that pgblog_writer needs no right
-- on any table, with search_path pinned to pg_catalog (every name they use
-- is schema-qualified, and operators resolve in pg_catalog).

-- The channel mod_blog listens on; each payload is a space-separated list
-- of Redis keys (the contract's "blog:page:" + the page's path), or "*"
-- for every page.  NOTIFY is transactional: the keys are sent when the
-- change commits, and not at all when it rolls back.

-- Send the keys of the detail pages of slugs, and of the index when
-- index_stale, on the channel blog_cache: in payloads below NOTIFY's 8000
-- bytes, or "*" when so many pages changed that dropping them all is
-- cheaper.  NOTIFY drops a payload already sent in the same transaction,
-- so the same page named by two statements of one write is sent once.
CREATE FUNCTION blog.notify_stale(slugs text[], index_stale boolean)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	keys		text[];
	payload		text := '';
	k			text;
BEGIN
	SELECT pg_catalog.array_agg(d.k ORDER BY d.k)
	INTO keys
	FROM (SELECT DISTINCT 'blog:page:/post/' || s COLLATE "C" AS k
		  FROM pg_catalog.unnest(slugs) AS s
		  WHERE s IS NOT NULL) AS d;
	IF index_stale THEN
		keys := pg_catalog.array_prepend('blog:page:/', keys);
	END IF;
	IF keys IS NULL THEN
		RETURN;
	END IF;
	IF pg_catalog.cardinality(keys) > 200 THEN
		PERFORM pg_catalog.pg_notify('blog_cache', '*');
		RETURN;
	END IF;
	FOREACH k IN ARRAY keys LOOP
		IF pg_catalog.octet_length(payload) + pg_catalog.octet_length(k) >= 7900 THEN
			PERFORM pg_catalog.pg_notify('blog_cache', payload);
			payload := '';
		END IF;
		payload := CASE WHEN payload = '' THEN k ELSE payload || ' ' || k END;
	END LOOP;
	PERFORM pg_catalog.pg_notify('blog_cache', payload);
END
$$;

-- The index shows the 20 latest posts by (published_at DESC, id DESC): a
-- post's change touches it when the post's old or new row sorts at or
-- above the 20th latest row as the table is after the change (a row that
-- left the 20 sorts above the row that replaced it).  NULLs when there
-- are fewer than 20 posts: then every post is on the index.
CREATE FUNCTION blog.index_cutoff(OUT published_at timestamptz, OUT id integer)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT p.published_at, p.id FROM blog.posts p
	ORDER BY p.published_at DESC, p.id DESC
	OFFSET 19 LIMIT 1
$$;

-- The pages of the posts ids (existing posts whose cards or detail pages
-- show the changed rows: their comments, tags, author).
CREATE FUNCTION blog.notify_posts(ids integer[])
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	slugs		text[];
	idx			boolean;
BEGIN
	SELECT pg_catalog.array_agg(p.slug),
		   pg_catalog.bool_or(c.id IS NULL
							  OR (p.published_at, p.id) >= (c.published_at, c.id))
	INTO slugs, idx
	FROM blog.posts p LEFT JOIN blog.index_cutoff() c ON true
	WHERE p.id = ANY (ids);
	PERFORM blog.notify_stale(slugs, coalesce(idx, false));
END
$$;

-- One trigger function per table, run once per statement with the
-- statement's old and new rows (transition tables old_rows, new_rows).
CREATE FUNCTION blog.posts_changed()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	rows_		record;
	slugs		text[] := '{}';
	idx			boolean := false;
	cut			record;
BEGIN
	SELECT * INTO cut FROM blog.index_cutoff();
	IF TG_OP IN ('INSERT', 'UPDATE') THEN
		FOR rows_ IN SELECT n.slug, n.published_at, n.id FROM new_rows n LOOP
			slugs := slugs || rows_.slug;
			idx := idx OR cut.id IS NULL
				OR (rows_.published_at, rows_.id) >= (cut.published_at, cut.id);
		END LOOP;
	END IF;
	IF TG_OP IN ('UPDATE', 'DELETE') THEN
		FOR rows_ IN SELECT o.slug, o.published_at, o.id FROM old_rows o LOOP
			slugs := slugs || rows_.slug;
			idx := idx OR cut.id IS NULL
				OR (rows_.published_at, rows_.id) >= (cut.published_at, cut.id);
		END LOOP;
	END IF;
	PERFORM blog.notify_stale(slugs, idx);
	RETURN NULL;
END
$$;

-- comments and post_tags: the pages of the posts they belong to.
CREATE FUNCTION blog.post_rows_changed()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		PERFORM blog.notify_posts(ARRAY(SELECT n.post_id FROM new_rows n));
	ELSIF TG_OP = 'DELETE' THEN
		PERFORM blog.notify_posts(ARRAY(SELECT o.post_id FROM old_rows o));
	ELSE
		PERFORM blog.notify_posts(ARRAY(SELECT n.post_id FROM new_rows n
										UNION SELECT o.post_id FROM old_rows o));
	END IF;
	RETURN NULL;
END
$$;

-- tags and authors: the pages of every post that shows them (a new tag or
-- author is on no page yet, and one in use cannot be deleted).
CREATE FUNCTION blog.names_changed()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ids			integer[];
BEGIN
	IF TG_OP <> 'UPDATE' THEN
		RETURN NULL;
	END IF;
	ids := ARRAY(SELECT n.id FROM new_rows n UNION SELECT o.id FROM old_rows o);
	IF TG_TABLE_NAME = 'tags' THEN
		PERFORM blog.notify_posts(ARRAY(SELECT pt.post_id FROM blog.post_tags pt
										WHERE pt.tag_id = ANY (ids)));
	ELSE
		PERFORM blog.notify_posts(ARRAY(SELECT p.id FROM blog.posts p
										WHERE p.author_id = ANY (ids)));
	END IF;
	RETURN NULL;
END
$$;

-- TRUNCATE has no rows to look at: every page.
CREATE FUNCTION blog.all_changed()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM pg_catalog.pg_notify('blog_cache', '*');
	RETURN NULL;
END
$$;

CREATE TRIGGER cache_insert AFTER INSERT ON blog.posts
	REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.posts_changed();
CREATE TRIGGER cache_update AFTER UPDATE ON blog.posts
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.posts_changed();
CREATE TRIGGER cache_delete AFTER DELETE ON blog.posts
	REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.posts_changed();

CREATE TRIGGER cache_insert AFTER INSERT ON blog.comments
	REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_rows_changed();
CREATE TRIGGER cache_update AFTER UPDATE ON blog.comments
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_rows_changed();
CREATE TRIGGER cache_delete AFTER DELETE ON blog.comments
	REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_rows_changed();

CREATE TRIGGER cache_insert AFTER INSERT ON blog.post_tags
	REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_rows_changed();
CREATE TRIGGER cache_update AFTER UPDATE ON blog.post_tags
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_rows_changed();
CREATE TRIGGER cache_delete AFTER DELETE ON blog.post_tags
	REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_rows_changed();

CREATE TRIGGER cache_update AFTER UPDATE ON blog.tags
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.names_changed();
CREATE TRIGGER cache_update AFTER UPDATE ON blog.authors
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.names_changed();

CREATE TRIGGER cache_truncate AFTER TRUNCATE ON blog.posts
	FOR EACH STATEMENT EXECUTE FUNCTION blog.all_changed();
CREATE TRIGGER cache_truncate AFTER TRUNCATE ON blog.comments
	FOR EACH STATEMENT EXECUTE FUNCTION blog.all_changed();
CREATE TRIGGER cache_truncate AFTER TRUNCATE ON blog.post_tags
	FOR EACH STATEMENT EXECUTE FUNCTION blog.all_changed();
CREATE TRIGGER cache_truncate AFTER TRUNCATE ON blog.tags
	FOR EACH STATEMENT EXECUTE FUNCTION blog.all_changed();
CREATE TRIGGER cache_truncate AFTER TRUNCATE ON blog.authors
	FOR EACH STATEMENT EXECUTE FUNCTION blog.all_changed();

-- Input checks shared by the write functions.  Lengths are in characters.

CREATE FUNCTION blog.check_slug(what text, slug text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF slug IS NULL THEN
		RAISE EXCEPTION '% must not be null', what
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF pg_catalog.octet_length(slug) > 64
	   OR slug COLLATE "C" !~ '^[a-z0-9-]+$' THEN
		RAISE EXCEPTION 'invalid % "%"', what, pg_catalog.left(slug, 80)
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A slug is 1 to 64 characters of a-z, 0-9 and "-".';
	END IF;
END
$$;

CREATE FUNCTION blog.check_text(what text, value text, max_chars integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF value IS NULL THEN
		RAISE EXCEPTION '% must not be null', what
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF pg_catalog.btrim(value, E' \t\r\n') = '' THEN
		RAISE EXCEPTION '% must not be empty', what
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF pg_catalog.char_length(value) > max_chars THEN
		RAISE EXCEPTION '% is too long', what
			USING ERRCODE = 'string_data_right_truncation',
				  DETAIL = pg_catalog.format('A %s is at most %s characters; this one has %s.',
											 what, max_chars, pg_catalog.char_length(value));
	END IF;
END
$$;

-- The tag ids of a list of tag slugs, each named once: 1 to 10 tags.
CREATE FUNCTION blog.tag_ids(tags text[])
RETURNS integer[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	t			text;
	ids			integer[] := '{}';
	tid			integer;
BEGIN
	IF tags IS NULL THEN
		RAISE EXCEPTION 'tags must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF pg_catalog.cardinality(tags) = 0 THEN
		RAISE EXCEPTION 'a post needs at least one tag'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOREACH t IN ARRAY tags LOOP
		PERFORM blog.check_slug('tag', t);
		SELECT g.id INTO tid FROM blog.tags g WHERE g.slug = t;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'unknown tag "%"', t
				USING ERRCODE = 'foreign_key_violation';
		END IF;
		IF tid <> ALL (ids) THEN
			ids := ids || tid;
		END IF;
	END LOOP;
	IF pg_catalog.cardinality(ids) > 10 THEN
		RAISE EXCEPTION 'too many tags'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = pg_catalog.format('A post has at most 10 tags; this one has %s.',
											 pg_catalog.cardinality(ids));
	END IF;
	RETURN ids;
END
$$;

-- The id of the post with slug, locked against a concurrent edit.
CREATE FUNCTION blog.post_id(slug text)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	pid			integer;
BEGIN
	PERFORM blog.check_slug('post slug', slug);
	SELECT p.id INTO pid FROM blog.posts p WHERE p.slug = post_id.slug FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'no post with slug "%"', slug
			USING ERRCODE = 'no_data_found';
	END IF;
	RETURN pid;
END
$$;

-- The write functions.  New ids are the next after the largest: the lock
-- (SHARE ROW EXCLUSIVE conflicts with itself and with writes, not with
-- the page functions' reads) makes concurrent writers take turns.

CREATE FUNCTION blog.publish_post(author_id integer, slug text, title text,
								  summary text, body text, tags text[],
								  published_at timestamptz DEFAULT now())
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	tag_list	integer[];
	new_id		integer;
BEGIN
	PERFORM blog.check_slug('slug', slug);
	PERFORM blog.check_text('title', title, 200);
	PERFORM blog.check_text('summary', summary, 1000);
	PERFORM blog.check_text('body', body, 100000);
	IF author_id IS NULL OR published_at IS NULL THEN
		RAISE EXCEPTION '% must not be null',
			CASE WHEN author_id IS NULL THEN 'author_id' ELSE 'published_at' END
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT EXISTS (SELECT FROM blog.authors a WHERE a.id = publish_post.author_id) THEN
		RAISE EXCEPTION 'unknown author %', author_id
			USING ERRCODE = 'foreign_key_violation';
	END IF;
	tag_list := blog.tag_ids(tags);
	LOCK TABLE blog.posts IN SHARE ROW EXCLUSIVE MODE;
	IF EXISTS (SELECT FROM blog.posts p WHERE p.slug = publish_post.slug) THEN
		RAISE EXCEPTION 'a post with slug "%" exists', slug
			USING ERRCODE = 'unique_violation';
	END IF;
	SELECT coalesce(max(p.id), 0) + 1 INTO new_id FROM blog.posts p;
	INSERT INTO blog.posts (id, author_id, slug, title, summary, body, published_at)
	VALUES (new_id, publish_post.author_id, publish_post.slug, publish_post.title,
			publish_post.summary, publish_post.body, publish_post.published_at);
	INSERT INTO blog.post_tags (post_id, tag_id)
	SELECT new_id, t FROM pg_catalog.unnest(tag_list) AS t;
	RETURN new_id;
END
$$;

-- NULL leaves a field as it is; tags, when given, replace the post's tags.
CREATE FUNCTION blog.edit_post(slug text, title text DEFAULT NULL,
							   summary text DEFAULT NULL, body text DEFAULT NULL,
							   tags text[] DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	pid			integer := blog.post_id(slug);
	tag_list	integer[];
BEGIN
	IF title IS NULL AND summary IS NULL AND body IS NULL AND tags IS NULL THEN
		RAISE EXCEPTION 'nothing to change'
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'Give a title, a summary, a body or tags.';
	END IF;
	IF title IS NOT NULL THEN
		PERFORM blog.check_text('title', title, 200);
	END IF;
	IF summary IS NOT NULL THEN
		PERFORM blog.check_text('summary', summary, 1000);
	END IF;
	IF body IS NOT NULL THEN
		PERFORM blog.check_text('body', body, 100000);
	END IF;
	IF tags IS NOT NULL THEN
		tag_list := blog.tag_ids(tags);
	END IF;
	IF title IS NOT NULL OR summary IS NOT NULL OR body IS NOT NULL THEN
		UPDATE blog.posts p
		SET title = coalesce(edit_post.title, p.title),
			summary = coalesce(edit_post.summary, p.summary),
			body = coalesce(edit_post.body, p.body)
		WHERE p.id = pid;
	END IF;
	IF tag_list IS NOT NULL THEN
		DELETE FROM blog.post_tags pt
		WHERE pt.post_id = pid AND pt.tag_id <> ALL (tag_list);
		INSERT INTO blog.post_tags (post_id, tag_id)
		SELECT pid, t FROM pg_catalog.unnest(tag_list) AS t
		ON CONFLICT DO NOTHING;
	END IF;
END
$$;

CREATE FUNCTION blog.add_comment(post_slug text, author_name text, body text)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	pid			integer;
	new_id		integer;
BEGIN
	PERFORM blog.check_text('author_name', author_name, 100);
	PERFORM blog.check_text('body', body, 10000);
	pid := blog.post_id(post_slug);
	LOCK TABLE blog.comments IN SHARE ROW EXCLUSIVE MODE;
	SELECT coalesce(max(c.id), 0) + 1 INTO new_id FROM blog.comments c;
	INSERT INTO blog.comments (id, post_id, author_name, body, created_at)
	VALUES (new_id, pid, add_comment.author_name, add_comment.body, now());
	RETURN new_id;
END
$$;

CREATE FUNCTION blog.delete_comment(id integer)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF id IS NULL THEN
		RAISE EXCEPTION 'id must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	DELETE FROM blog.comments c WHERE c.id = delete_comment.id;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'no comment with id %', id
			USING ERRCODE = 'no_data_found';
	END IF;
END
$$;

COMMENT ON FUNCTION blog.publish_post(integer, text, text, text, text, text[], timestamptz) IS
	'publish a post with its tags; returns its id';
COMMENT ON FUNCTION blog.edit_post(text, text, text, text, text[]) IS
	'change a post''s title, summary, body or tags (NULL: unchanged)';
COMMENT ON FUNCTION blog.add_comment(text, text, text) IS
	'add a comment to a post, dated now; returns its id';
COMMENT ON FUNCTION blog.delete_comment(integer) IS
	'delete a comment';

REVOKE ALL ON FUNCTION blog.notify_stale(text[], boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.index_cutoff() FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.notify_posts(integer[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.posts_changed() FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.post_rows_changed() FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.names_changed() FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.all_changed() FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.check_slug(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.check_text(text, text, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.tag_ids(text[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.post_id(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.publish_post(integer, text, text, text, text, text[], timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.edit_post(text, text, text, text, text[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.add_comment(text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.delete_comment(integer) FROM PUBLIC;

-- EXECUTE on the four write functions goes to no role here, as for the
-- page functions: the site's set-up (sql/setup.sql of the repository)
-- creates the writers' role and grants it.
