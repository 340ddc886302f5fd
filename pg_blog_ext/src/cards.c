/*-------------------------------------------------------------------------
 *
 * cards.c
 *	  The post cards of the index and tag pages: each post with its tags
 *	  and comment count, read for all the cards at once in key order
 *	  (blog_index_lookup()), so that a page costs a walk over a few leaf
 *	  pages rather than an index descent per post.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/table.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

static void
count_comment(const BlogEntry *entry, void *arg)
{
	((int32 *) arg)[entry->key]++;
}

/*
 * The comment count of each post of ids[0 .. n) (sorted, distinct): its
 * visible entries in comments (post_id, created_at, id), index-only.
 */
static int32 *
comment_counts(const int32 *ids, int n)
{
	Relation	comments = blog_open_table(BLOG_REL_comments);
	Relation	index = blog_open_int4_index(BLOG_REL_comments_post_idx,
												 comments, 1);
	int32	   *counts = palloc0(sizeof(int32) * n);

	blog_index_lookup(comments, index, ids, n, false, count_comment, counts);
	index_close(index, NoLock);
	table_close(comments, NoLock);
	return counts;
}

/*
 * Return the posts as cards, in the order given, each row starting with
 * the npre values of prefix.
 */
void
blog_cards_emit(FunctionCallInfo fcinfo, BlogPost *posts, int nposts,
				Datum *prefix, int npre)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int32	   *ids = palloc(sizeof(int32) * nposts);
	int32	   *counts;
	BlogTagArrays tags;
	int			nids;
	int			i;

	Assert(npre <= BLOG_CARD_MAX_PREFIX);
	/* the reads go in key order; a post's data is found by its key's place */
	for (i = 0; i < nposts; i++)
		ids[i] = posts[i].id;
	nids = blog_sort_unique(ids, nposts);
	counts = comment_counts(ids, nids);
	blog_tag_arrays(ids, nids, &tags);

	for (i = 0; i < nposts; i++)
	{
		Datum		values[BLOG_CARD_MAX_PREFIX + BLOG_CARD_COLS];
		bool		nulls[BLOG_CARD_MAX_PREFIX + BLOG_CARD_COLS] = {0};
		Datum	   *v = values + npre;
		int			k = blog_key_index(ids, nids, posts[i].id);

		CHECK_FOR_INTERRUPTS();
		if (npre > 0)
			memcpy(values, prefix, sizeof(Datum) * npre);
		v[0] = posts[i].slug;
		v[1] = posts[i].title;
		v[2] = posts[i].author;
		v[3] = TimestampTzGetDatum(posts[i].published_at);
		v[4] = Int32GetDatum(counts[k]);
		v[5] = tags.slugs[k];
		v[6] = tags.names[k];
		v[7] = posts[i].summary;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}
