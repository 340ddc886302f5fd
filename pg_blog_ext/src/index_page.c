/*-------------------------------------------------------------------------
 *
 * index_page.c
 *	  blog.index_page(n): the cards of the n latest posts.
 *
 *	  The first n entries of posts (published_at DESC, id DESC) are the page,
 *	  in its order: one index walk, then the posts' rows, no sort.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

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
	return (options[0] & INDOPTION_DESC) ? ForwardScanDirection : BackwardScanDirection;
}

/* The n newest posts, newest first. */
static int
fetch_latest(int32 n, BlogPost **out)
{
	Relation	posts = blog_open_table(BLOG_REL_posts);
	Relation	index = blog_open_index(BLOG_REL_posts_published_idx, posts);
	ScanDirection dir = newest_first(index, posts);
	TupleTableSlot *slot = table_slot_create(posts, NULL);
	IndexScanDesc scan = blog_index_beginscan(posts, index, GetActiveSnapshot(), 0, 0);
	AttrNumber	atts[BLOG_POST_NCOLS];
	List	   *list = NIL;
	BlogPost   *array;
	ListCell   *lc;
	int			i = 0;

	blog_attnums(posts, blog_post_cols, BLOG_POST_NCOLS, atts);
	index_rescan(scan, NULL, 0, NULL, 0);
	while (list_length(list) < n && index_getnext_slot(scan, dir, slot))
	{
		Datum		values[BLOG_POST_NCOLS];
		BlogPost   *post = palloc(sizeof(BlogPost));

		CHECK_FOR_INTERRUPTS();
		blog_slot_values(slot, atts, blog_post_cols, BLOG_POST_NCOLS, values);
		blog_post_set(post, values);
		list = lappend(list, post);
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	index_close(index, NoLock);
	table_close(posts, NoLock);

	array = palloc(sizeof(BlogPost) * list_length(list));
	foreach(lc, list)
		array[i++] = *(BlogPost *) lfirst(lc);
	*out = array;
	return i;
}

Datum
blog_index_page(PG_FUNCTION_ARGS)
{
	int32		n = PG_GETARG_INT32(0);
	BlogPost   *posts;
	int			nposts;

	blog_materialize(fcinfo);
	if (n <= 0)
		return (Datum) 0;

	nposts = fetch_latest(n, &posts);
	blog_posts_authors(posts, nposts);
	blog_cards_emit(fcinfo, posts, nposts, NULL, 0);

	return (Datum) 0;
}
