/* SPDX-License-Identifier: Apache-2.0 */
/*-------------------------------------------------------------------------
 *
 * index_page.c
 *	  blog.index_page(n): the cards of the n latest posts.
 *
 *	  The first n entries of posts (published_at DESC, id DESC) are the page,
 *	  in its order: one index walk, index-only (the index covers a card's
 *	  columns), no sort.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/table.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(blog_index_page);

/* The newest first: the index is descending, or walked backwards. */
static ScanDirection
newest_first(Relation index, Relation posts)
{
	TupleDesc	desc = RelationGetDescr(index);
	int16	   *options = index->rd_indoption;
	bool		ok;

	ok = index->rd_index->indnkeyatts == 2 &&
		index->rd_index->indkey.values[0] == blog_attnum(posts, "published_at") &&
		index->rd_index->indkey.values[1] == blog_attnum(posts, "id") &&
		TupleDescAttr(desc, 0)->atttypid == TIMESTAMPTZOID &&
		TupleDescAttr(desc, 1)->atttypid == INT4OID &&
		(options[0] & INDOPTION_DESC) == (options[1] & INDOPTION_DESC);
	if (!ok)
		blog_refuse_layout(index);
	return (options[0] & INDOPTION_DESC) ?
		ForwardScanDirection : BackwardScanDirection;
}

static void
keep_post(Datum *values, int key, void *arg)
{
	List	  **list = (List **) arg;
	BlogPost   *post = palloc(sizeof(BlogPost));

	(void) key;
	blog_post_set(post, values);
	*list = lappend(*list, post);
}

/*
 * The n newest posts, newest first: from the entries of the covering
 * posts_published_idx alone where their heap pages are all-visible.
 */
static int
fetch_latest(int32 n, BlogPost **out)
{
	Relation	posts = blog_open_table(BLOG_REL_posts);
	Relation	index = blog_open_index(BLOG_REL_posts_published_idx, posts);
	ScanDirection dir = newest_first(index, posts);
	List	   *list = NIL;
	BlogPost   *array;
	ListCell   *lc;
	int			i = 0;

	index_close(index, NoLock);
	table_close(posts, NoLock);
	blog_fetch_first(BLOG_READ_CARDS_LATEST, dir, n, keep_post, &list);

	array = palloc(sizeof(BlogPost) * Max(list_length(list), 1));
	foreach(lc, list)
		array[i++] = *(BlogPost *) lfirst(lc);
	*out = array;
	return i;
}

static void
index_page(FunctionCallInfo fcinfo)
{
	int32		n = PG_GETARG_INT32(0);
	BlogPost   *posts;
	int			nposts;

	if (n <= 0)
		return;

	nposts = fetch_latest(n, &posts);
	blog_posts_copies(posts, nposts);
	blog_posts_authors(posts, nposts);
	blog_cards_emit(fcinfo, posts, nposts, NULL, 0);
}

Datum
blog_index_page(PG_FUNCTION_ARGS)
{
	return blog_page(fcinfo, index_page);
}
