-- SPDX-License-Identifier: Apache-2.0
/* pg_blog 1.2 -> 1.3: a post's comment count and tag ids kept on its row */

\echo Use "ALTER EXTENSION pg_blog UPDATE TO '1.3'" to load this file. \quit

-- A card shows its post's comment count and tags.  Counting the comments
-- and reading the post_tags links of every card costs a B-tree descent per
-- post, most of a card page's time; kept on the post's row (a counter
-- cache and a denormalised array, in tag-id order, the pages' order) they
-- come with the post's entry of posts_card_idx.  Triggers keep them right
-- in the writing transaction; the page functions never write.
ALTER TABLE blog.posts
	ADD COLUMN comment_count integer NOT NULL DEFAULT 0,
	ADD COLUMN tag_ids integer[] NOT NULL DEFAULT '{}';

-- Set comment_count and tag_ids of the posts ids from their comments and
-- links, as this transaction's next statement sees them.  The rows are
-- locked first, in id order: a concurrent writer of the same post waits
-- here for the other's commit, and the UPDATE that follows, a statement
-- with its own snapshot under READ COMMITTED, then counts both writers'
-- rows (a count carried in the row and incremented would be as right, but
-- a restore that loads posts before comments would count them twice).  A
-- post whose values did not change is not written, and so not notified.
-- SECURITY DEFINER: whoever may write comments or links keeps the posts'
-- copies right without a right of their own on posts.
CREATE FUNCTION blog.sync_posts(ids integer[])
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM FROM blog.posts p WHERE p.id = ANY (ids) ORDER BY p.id FOR NO KEY UPDATE;
	UPDATE blog.posts p
	SET comment_count = s.comment_count, tag_ids = s.tag_ids
	FROM (SELECT q.id,
				 (SELECT pg_catalog.count(*)::integer FROM blog.comments c
				  WHERE c.post_id = q.id) AS comment_count,
				 ARRAY(SELECT pt.tag_id FROM blog.post_tags pt
					   WHERE pt.post_id = q.id ORDER BY pt.tag_id) AS tag_ids
		  FROM blog.posts q WHERE q.id = ANY (ids)) s
	WHERE p.id = s.id
	  AND (p.comment_count, p.tag_ids) IS DISTINCT FROM (s.comment_count, s.tag_ids);
END
$$;

-- comments and post_tags: the posts of the rows a statement inserted,
-- deleted or moved; TRUNCATE, every post that had any.
CREATE FUNCTION blog.post_copies_changed()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		PERFORM blog.sync_posts(ARRAY(SELECT DISTINCT n.post_id FROM new_rows n));
	ELSIF TG_OP = 'DELETE' THEN
		PERFORM blog.sync_posts(ARRAY(SELECT DISTINCT o.post_id FROM old_rows o));
	ELSIF TG_OP = 'UPDATE' THEN
		PERFORM blog.sync_posts(ARRAY(SELECT n.post_id FROM new_rows n
									  UNION SELECT o.post_id FROM old_rows o));
	ELSE
		PERFORM blog.sync_posts(ARRAY(SELECT p.id FROM blog.posts p
									  WHERE p.comment_count <> 0
										 OR p.tag_ids <> '{}'));
	END IF;
	RETURN NULL;
END
$$;

-- The same four triggers on each table whose rows posts copy, written out:
-- SQL built from case-folded text follows the database's collation (upper
-- of 'insert' is 'İNSERT' under a Turkish one), and these need none.
CREATE TRIGGER copies_insert AFTER INSERT ON blog.comments
	REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_copies_changed();
CREATE TRIGGER copies_update AFTER UPDATE ON blog.comments
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_copies_changed();
CREATE TRIGGER copies_delete AFTER DELETE ON blog.comments
	REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_copies_changed();
CREATE TRIGGER copies_truncate AFTER TRUNCATE ON blog.comments
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_copies_changed();

CREATE TRIGGER copies_insert AFTER INSERT ON blog.post_tags
	REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_copies_changed();
CREATE TRIGGER copies_update AFTER UPDATE ON blog.post_tags
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_copies_changed();
CREATE TRIGGER copies_delete AFTER DELETE ON blog.post_tags
	REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_copies_changed();
CREATE TRIGGER copies_truncate AFTER TRUNCATE ON blog.post_tags
	FOR EACH STATEMENT EXECUTE FUNCTION blog.post_copies_changed();

REVOKE ALL ON FUNCTION blog.sync_posts(integer[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION blog.post_copies_changed() FROM PUBLIC;

-- The rows as they are: every post, with the cache triggers of posts off
-- for the statement (no page changes: the pages showed these values
-- already), then the posts' indexes the cards read rebuilt with the two
-- columns.  The index page's walk of posts_published_idx becomes
-- index-only too: it covers a card's columns.
ALTER TABLE blog.posts DISABLE TRIGGER cache_update;
SELECT blog.sync_posts(ARRAY(SELECT p.id FROM blog.posts p));
ALTER TABLE blog.posts ENABLE TRIGGER cache_update;

DROP INDEX blog.posts_card_idx;
CREATE UNIQUE INDEX posts_card_idx ON blog.posts (id)
	INCLUDE (author_id, slug, title, summary, published_at, comment_count, tag_ids);

DROP INDEX blog.posts_published_idx;
CREATE INDEX posts_published_idx ON blog.posts (published_at DESC, id DESC)
	INCLUDE (author_id, slug, title, summary, comment_count, tag_ids);
