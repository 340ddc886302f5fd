/* SPDX-License-Identifier: Apache-2.0 */
/*-------------------------------------------------------------------------
 *
 * posts.c
 *	  What a post card shows of a post row, with its author's name, and in
 *	  a schema older than 1.3 its comment count and tag ids.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/timestamp.h"

/*
 * Fill post from the values of a card's read (BlogPostCol), copying its
 * texts out of the row.
 */
void
blog_post_set(BlogPost *post, const Datum *values)
{
	post->id = DatumGetInt32(values[BLOG_POST_ID]);
	post->author_id = DatumGetInt32(values[BLOG_POST_AUTHOR_ID]);
	post->slug = blog_text_copy(values[BLOG_POST_SLUG]);
	post->title = blog_text_copy(values[BLOG_POST_TITLE]);
	post->summary = blog_text_copy(values[BLOG_POST_SUMMARY]);
	post->published_at = DatumGetTimestampTz(values[BLOG_POST_PUBLISHED]);
	/* (Datum) 0 in a schema before 1.3: blog_posts_copies() finds them */
	post->comment_count = DatumGetInt32(values[BLOG_POST_COMMENT_COUNT]);
	post->tag_ids = values[BLOG_POST_TAG_IDS] == (Datum) 0 ? (Datum) 0 :
		blog_int4_array_copy(values[BLOG_POST_TAG_IDS]);
	post->author = (Datum) 0;
}

static void
keep_name(Datum *values, int key, void *arg)
{
	((Datum *) arg)[key] = blog_text_copy(values[0]);
}

/*
 * Set the author name of posts[0 .. n), reading each distinct author once
 * by key.
 */
void
blog_posts_authors(BlogPost *posts, int n)
{
	int32	   *ids = palloc(sizeof(int32) * n);
	Datum	   *names;
	int			nids;
	int			i;

	for (i = 0; i < n; i++)
		ids[i] = posts[i].author_id;
	nids = blog_sort_unique(ids, n);
	names = palloc0(sizeof(Datum) * nids);
	blog_fetch_by_int4(BLOG_READ_AUTHOR_NAMES, ids, nids, keep_name, names);

	for (i = 0; i < n; i++)
	{
		int			k = blog_key_index(ids, nids, posts[i].author_id);

		if (names[k] == (Datum) 0)
			ereport(ERROR,
					(errcode(ERRCODE_FOREIGN_KEY_VIOLATION),
					 errmsg("author %d of post %d not found",
							posts[i].author_id, posts[i].id)));
		posts[i].author = names[k];
	}
	pfree(ids);
}

/* The posts of a schema before 1.3, as blog_posts_copies() reads them */
typedef struct Copies
{
	int32	   *counts;			/* comments per key */
	List	  **tag_ids;		/* tag ids per key, in tag-id order */
} Copies;

static void
count_comment(const BlogEntry *entry, void *arg)
{
	((Copies *) arg)->counts[entry->key]++;
}

static void
collect_tag_id(const BlogEntry *entry, void *arg)
{
	List	  **ids = &((Copies *) arg)->tag_ids[entry->key];

	*ids = lappend_int(*ids, blog_entry_int4(entry, 2));
}

/*
 * fn for the visible entries of keys[0 .. nkeys) in index_rel of table,
 * whose first natts columns are int4
 */
static void
read_entries(BlogRel table, BlogRel index_rel, int natts, const int32 *keys,
			 int nkeys, BlogEntryFn fn, void *arg)
{
	Relation	heap = blog_open_table(table);
	Relation	index = blog_open_int4_index(index_rel, heap, natts);

	blog_index_lookup(heap, index, keys, nkeys, false, fn, arg);
	index_close(index, NoLock);
	table_close(heap, NoLock);
}

/*
 * Set the comment count and the tag ids of posts[0 .. n) read from a
 * schema older than 1.3 (tag_ids (Datum) 0), whose posts do not carry
 * them: counted from comments (post_id, created_at, id) and collected from
 * the primary key of post_tags (post_id, tag_id), each index read once for
 * all the posts, as the triggers of 1.3 would have set them.  From 1.3 on,
 * nothing to do.
 */
void
blog_posts_copies(BlogPost *posts, int n)
{
	int32	   *ids;
	int			nids;
	Copies		c;
	int			i;

	if (n == 0 || posts[0].tag_ids != (Datum) 0)
		return;
	ids = palloc(sizeof(int32) * n);
	for (i = 0; i < n; i++)
		ids[i] = posts[i].id;
	nids = blog_sort_unique(ids, n);
	c.counts = palloc0(sizeof(int32) * nids);
	c.tag_ids = palloc0(sizeof(List *) * nids);
	read_entries(BLOG_REL_comments, BLOG_REL_comments_post_idx, 1, ids, nids,
				 count_comment, &c);
	read_entries(BLOG_REL_post_tags, BLOG_REL_post_tags_pkey, 2, ids, nids,
				 collect_tag_id, &c);

	for (i = 0; i < n; i++)
	{
		int			k = blog_key_index(ids, nids, posts[i].id);
		List	   *tags = c.tag_ids[k];
		Datum	   *elems = palloc(sizeof(Datum) * Max(list_length(tags), 1));
		ListCell   *lc;
		int			j = 0;

		foreach(lc, tags)
			elems[j++] = Int32GetDatum(lfirst_int(lc));
		posts[i].comment_count = c.counts[k];
		posts[i].tag_ids = PointerGetDatum(construct_array(elems, j, INT4OID,
														   sizeof(int32), true,
														   TYPALIGN_INT));
	}
}
