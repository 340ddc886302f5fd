/*-------------------------------------------------------------------------
 *
 * tag_page.c
 *	  blog.tag_page(slug): a tag and the cards of its posts, newest first.
 *
 *	  Read with direct index scans: the tag by its slug, its post ids from
 *	  (tag_id, post_id), each post by its key, the few authors by theirs.
 *	  No executor start-up, join or sort node per call.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(blog_tag_page);

/* Newest first; ties by higher id first (SPEC section 5). */
static int
post_order_cmp(const void *a, const void *b)
{
	const BlogPost *x = (const BlogPost *) a;
	const BlogPost *y = (const BlogPost *) b;

	if (x->published_at != y->published_at)
		return x->published_at > y->published_at ? -1 : 1;
	return (x->id < y->id) - (x->id > y->id);
}

/* The tag's row, found through the unique index on its slug. */
static HeapTuple
fetch_tag(Oid nsp, Datum slug, Relation *tags_out)
{
	Relation	tags = table_open(blog_relid(nsp, "tags"), AccessShareLock);
	HeapTuple	tuple = blog_fetch_by_text(nsp, tags, "tags_slug_key", slug);

	*tags_out = tags;
	return tuple;
}

typedef struct PostList
{
	BlogPost   *posts;
	int			n;
	int			cap;
} PostList;

static void
keep_post(Datum *values, bool *isnull, void *arg)
{
	PostList   *list = (PostList *) arg;

	/* a key appears once; more rows than keys means a broken table */
	if (list->n == list->cap)
		elog(ERROR, "duplicate post id %d", DatumGetInt32(values[0]));
	blog_post_set(&list->posts[list->n++], values, isnull);
}

/* The posts with these ids, newest first, with their authors' names. */
static int
fetch_posts(Oid nsp, const int32 *ids, int nids, BlogPost *posts)
{
	PostList	found;
	int			i;

	found.posts = posts;
	found.n = 0;
	found.cap = nids;
	blog_fetch_by_int4(nsp, "posts", "posts_pkey", ids, nids,
					   blog_post_cols, BLOG_POST_NCOLS, keep_post, &found);
	blog_posts_authors(nsp, posts, found.n);

	/*
	 * They mostly come in id order (of the key or of the heap), and newer
	 * posts mostly have higher ids: reversed, they are usually sorted
	 * already, which qsort() checks in one pass.
	 */
	for (i = 0; i < found.n / 2; i++)
	{
		BlogPost	tmp = posts[i];

		posts[i] = posts[found.n - 1 - i];
		posts[found.n - 1 - i] = tmp;
	}
	qsort(posts, found.n, sizeof(BlogPost), post_order_cmp);
	return found.n;
}

Datum
blog_tag_page(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		slug = PG_GETARG_DATUM(0);
	Relation	tags;
	HeapTuple	tag;
	Datum		tag_name;
	int32		tag_id;
	int32	   *ids;
	int			nids;
	BlogPost   *posts;
	int			nposts;
	Oid			nsp;

	blog_materialize(fcinfo);
	if (!blog_slug_arg_is_valid(slug))
		return (Datum) 0;

	nsp = blog_nsp();

	tag = fetch_tag(nsp, slug, &tags);
	if (tag == NULL)
	{
		table_close(tags, NoLock);
		return (Datum) 0;
	}
	tag_id = blog_int4_attr(tag, RelationGetDescr(tags), blog_attnum(tags, "id"));
	tag_name = blog_text_attr(tag, RelationGetDescr(tags), blog_attnum(tags, "name"));
	table_close(tags, NoLock);

	/* the ids of the posts carrying the tag, in id order */
	ids = blog_linked_ids(nsp, "post_tags_tag_idx", tag_id, &nids);
	posts = palloc(sizeof(BlogPost) * (nids + 1));
	nposts = fetch_posts(nsp, ids, nids, posts);

	if (nposts == 0)
	{
		/* a tag without posts still has a page: its name, no cards */
		Datum		values[BLOG_CARD_MAX_COLS] = {0};
		bool		nulls[BLOG_CARD_MAX_COLS];

		memset(nulls, true, sizeof(nulls));
		values[0] = tag_name;
		nulls[0] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	else
		blog_cards_emit(fcinfo, posts, nposts, &tag_name, 1);

	return (Datum) 0;
}
