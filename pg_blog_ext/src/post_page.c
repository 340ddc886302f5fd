/*-------------------------------------------------------------------------
 *
 * post_page.c
 *	  blog.post_page(slug): one post, its tags and its comments.
 *
 *	  Read with direct index scans: the post by its slug, its author by
 *	  key, its tag ids from the post_tags primary key (tag-id order) and
 *	  their rows by key, its comments from (post_id, created_at, id), which
 *	  is the page's order.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(blog_post_page);

enum
{
	COL_TITLE,
	COL_AUTHOR,
	COL_PUBLISHED,
	COL_BODY,
	COL_TAG_SLUGS,
	COL_TAG_NAMES,
	COL_COMMENT_AUTHORS,
	COL_COMMENT_BODIES,
	COL_COMMENT_TIMES,
	NUM_COLS
};

typedef struct IdList
{
	int32		ids[64];
	int			n;
} IdList;

static void
collect_tag_id(IndexScanDesc scan, int slot, void *arg)
{
	IdList	   *list = (IdList *) arg;
	bool		isnull;
	Datum		id = index_getattr(scan->xs_itup, 2, scan->xs_itupdesc, &isnull);

	(void) slot;
	if (isnull)
		return;
	if (list->n == lengthof(list->ids))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a post has more than %d tags", (int) lengthof(list->ids))));
	list->ids[list->n++] = DatumGetInt32(id);
}

static void
fetch_author(Oid nsp, int32 author_id, Datum *values)
{
	HeapTuple	tuple;
	TupleDesc	desc;
	Relation	rel;

	if (blog_fetch_by_int4(nsp, "authors", "authors_pkey", &author_id, 1,
						   &tuple, &desc) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FOREIGN_KEY_VIOLATION),
				 errmsg("author %d not found", author_id)));
	rel = RelationIdGetRelation(blog_relid(nsp, "authors"));
	values[COL_AUTHOR] = blog_text_attr(tuple, desc, blog_attnum(rel, "name"));
	RelationClose(rel);
}

static void
fetch_tags(Oid nsp, int32 post_id, Datum *values)
{
	Relation	post_tags = table_open(blog_relid(nsp, "post_tags"), AccessShareLock);
	Relation	index = blog_open_int4_index(nsp, "post_tags_pkey", post_tags, 2);
	IdList		list;
	IdSlot		key;
	HeapTuple	tuples[lengthof(list.ids)];
	Datum		slugs[lengthof(list.ids)];
	Datum		names[lengthof(list.ids)];
	TupleDesc	desc;
	Relation	tags;
	AttrNumber	att_slug;
	AttrNumber	att_name;
	int			n;
	int			i;

	key.id = post_id;
	key.slot = 0;
	list.n = 0;
	blog_scan_index_only(post_tags, index, &key, 1, collect_tag_id, &list);
	index_close(index, NoLock);
	table_close(post_tags, NoLock);

	n = blog_fetch_by_int4(nsp, "tags", "tags_pkey", list.ids, list.n, tuples, &desc);
	tags = RelationIdGetRelation(blog_relid(nsp, "tags"));
	att_slug = blog_attnum(tags, "slug");
	att_name = blog_attnum(tags, "name");
	RelationClose(tags);
	for (i = 0; i < n; i++)
	{
		slugs[i] = blog_text_attr(tuples[i], desc, att_slug);
		names[i] = blog_text_attr(tuples[i], desc, att_name);
	}
	values[COL_TAG_SLUGS] = blog_text_array(slugs, n);
	values[COL_TAG_NAMES] = blog_text_array(names, n);
}

static void
fetch_comments(Oid nsp, int32 post_id, Datum *values)
{
	Relation	comments = table_open(blog_relid(nsp, "comments"), AccessShareLock);
	Relation	index = blog_open_int4_index(nsp, "comments_post_idx", comments, 1);
	TupleDesc	desc = RelationGetDescr(comments);
	AttrNumber	att_author = blog_attnum(comments, "author_name");
	AttrNumber	att_body = blog_attnum(comments, "body");
	AttrNumber	att_created = blog_attnum(comments, "created_at");
	TupleTableSlot *slot = table_slot_create(comments, NULL);
	IndexScanDesc scan;
	ScanKeyData key;
	int			cap = 32;
	int			n = 0;
	Datum	   *authors = palloc(sizeof(Datum) * cap);
	Datum	   *bodies = palloc(sizeof(Datum) * cap);
	Datum	   *times = palloc(sizeof(Datum) * cap);

	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(post_id));
	scan = index_beginscan(comments, index, GetActiveSnapshot(), 1, 0);
	index_rescan(scan, &key, 1, NULL, 0);
	/* the index order (post_id, created_at, id) is the page's order */
	while (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		HeapTuple	tuple = ExecCopySlotHeapTuple(slot);
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		if (n == cap)
		{
			cap *= 2;
			authors = repalloc(authors, sizeof(Datum) * cap);
			bodies = repalloc(bodies, sizeof(Datum) * cap);
			times = repalloc(times, sizeof(Datum) * cap);
		}
		authors[n] = blog_text_attr(tuple, desc, att_author);
		bodies[n] = blog_text_attr(tuple, desc, att_body);
		times[n] = heap_getattr(tuple, att_created, desc, &isnull);
		if (isnull)
			elog(ERROR, "unexpected null in column %d", att_created);
		n++;
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	index_close(index, NoLock);
	table_close(comments, NoLock);

	values[COL_COMMENT_AUTHORS] = blog_text_array(authors, n);
	values[COL_COMMENT_BODIES] = blog_text_array(bodies, n);
	if (n == 0)
		values[COL_COMMENT_TIMES] =
			PointerGetDatum(construct_empty_array(TIMESTAMPTZOID));
	else
		values[COL_COMMENT_TIMES] =
			PointerGetDatum(construct_array(times, n, TIMESTAMPTZOID,
											sizeof(TimestampTz),
											FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

Datum
blog_post_page(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		slug = PG_GETARG_DATUM(0);
	Datum		values[NUM_COLS];
	bool		nulls[NUM_COLS] = {0};
	Relation	posts;
	HeapTuple	post;
	TupleDesc	desc;
	int32		post_id;
	int32		author_id;
	bool		isnull;
	Oid			nsp;

	blog_materialize(fcinfo);
	if (!blog_slug_arg_is_valid(slug))
		return (Datum) 0;

	nsp = get_namespace_oid("blog", false);
	posts = table_open(blog_relid(nsp, "posts"), AccessShareLock);
	post = blog_fetch_by_text(nsp, posts, "posts_slug_key", slug);
	if (post == NULL)
	{
		table_close(posts, NoLock);
		return (Datum) 0;
	}
	desc = RelationGetDescr(posts);
	post_id = blog_int4_attr(post, desc, blog_attnum(posts, "id"));
	author_id = blog_int4_attr(post, desc, blog_attnum(posts, "author_id"));
	values[COL_TITLE] = blog_text_attr(post, desc, blog_attnum(posts, "title"));
	values[COL_BODY] = blog_text_attr(post, desc, blog_attnum(posts, "body"));
	values[COL_PUBLISHED] = heap_getattr(post, blog_attnum(posts, "published_at"),
										 desc, &isnull);
	if (isnull)
		elog(ERROR, "unexpected null in column published_at");
	table_close(posts, NoLock);

	fetch_author(nsp, author_id, values);
	fetch_tags(nsp, post_id, values);
	fetch_comments(nsp, post_id, values);

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}
