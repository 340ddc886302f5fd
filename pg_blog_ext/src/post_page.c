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
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/datum.h"
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

static void
keep_author_name(Datum *values, bool *isnull, void *arg)
{
	if (isnull[0])
		elog(ERROR, "unexpected null in column name");
	*(Datum *) arg = blog_text_copy(values[0]);
}

static void
fetch_author(Oid nsp, int32 author_id, Datum *values)
{
	static const char *const cols[] = {"name"};

	if (blog_fetch_by_int4(nsp, "authors", "authors_pkey", &author_id, 1,
						   cols, lengthof(cols), keep_author_name,
						   &values[COL_AUTHOR]) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FOREIGN_KEY_VIOLATION),
				 errmsg("author %d not found", author_id)));
}

static void
fetch_tags(Oid nsp, int32 post_id, Datum *values)
{
	int			nids;
	int32	   *ids = blog_linked_ids(nsp, "post_tags_pkey", post_id, &nids);
	BlogTag    *tags = palloc(sizeof(BlogTag) * (nids + 1));
	Datum	   *slugs = palloc(sizeof(Datum) * (nids + 1));
	Datum	   *names = palloc(sizeof(Datum) * (nids + 1));
	int			ntags;
	int			n = 0;
	int			i;

	ntags = blog_tags_fetch(nsp, ids, nids, tags);
	for (i = 0; i < nids; i++)
	{
		BlogTag    *hit = blog_tag_find(tags, ntags, ids[i]);

		/* a link whose tag this snapshot cannot see is skipped */
		if (hit != NULL)
		{
			slugs[n] = hit->slug;
			names[n] = hit->name;
			n++;
		}
	}
	values[COL_TAG_SLUGS] = blog_text_array(slugs, n);
	values[COL_TAG_NAMES] = blog_text_array(names, n);
}

static void
fetch_comments(Oid nsp, int32 post_id, Datum *values)
{
	static const char *const cols[] = {"author_name", "body", "created_at"};
	Relation	comments = table_open(blog_relid(nsp, "comments"), AccessShareLock);
	Relation	index = blog_open_int4_index(nsp, "comments_post_idx", comments, 1);
	AttrNumber	atts[lengthof(cols)];
	TupleTableSlot *slot = table_slot_create(comments, NULL);
	IndexScanDesc scan;
	ScanKeyData key;
	int			cap = 32;
	int			n = 0;
	Datum	   *authors = palloc(sizeof(Datum) * cap);
	Datum	   *bodies = palloc(sizeof(Datum) * cap);
	Datum	   *times = palloc(sizeof(Datum) * cap);

	blog_attnums(comments, cols, lengthof(cols), atts);
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(post_id));
	scan = index_beginscan(comments, index, GetActiveSnapshot(), 1, 0);
	index_rescan(scan, &key, 1, NULL, 0);
	/* the index order (post_id, created_at, id) is the page's order */
	while (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		Datum		v[lengthof(cols)];
		bool		isnull[lengthof(cols)];
		int			i;

		CHECK_FOR_INTERRUPTS();
		if (n == cap)
		{
			cap *= 2;
			authors = repalloc(authors, sizeof(Datum) * cap);
			bodies = repalloc(bodies, sizeof(Datum) * cap);
			times = repalloc(times, sizeof(Datum) * cap);
		}
		blog_slot_values(slot, atts, lengthof(cols), v, isnull);
		for (i = 0; i < (int) lengthof(cols); i++)
			if (isnull[i])
				elog(ERROR, "unexpected null in column %s", cols[i]);
		/* the next row may unpin this one's buffer */
		authors[n] = blog_text_copy(v[0]);
		bodies[n] = blog_text_copy(v[1]);
		times[n] = datumCopy(v[2], FLOAT8PASSBYVAL, sizeof(TimestampTz));
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
	static const char *const post_cols[] = {
		"id", "author_id", "title", "body", "published_at"
	};
	AttrNumber	atts[lengthof(post_cols)];
	Relation	posts;
	HeapTuple	post;
	TupleDesc	desc;
	Datum	   *row;
	bool	   *rownull;
	int32		post_id;
	int32		author_id;
	Oid			nsp;
	int			i;

	blog_materialize(fcinfo);
	if (!blog_slug_arg_is_valid(slug))
		return (Datum) 0;

	nsp = blog_nsp();
	posts = table_open(blog_relid(nsp, "posts"), AccessShareLock);
	post = blog_fetch_by_text(nsp, posts, "posts_slug_key", slug);
	if (post == NULL)
	{
		table_close(posts, NoLock);
		return (Datum) 0;
	}
	blog_attnums(posts, post_cols, lengthof(post_cols), atts);
	desc = RelationGetDescr(posts);
	row = palloc(sizeof(Datum) * desc->natts);
	rownull = palloc(sizeof(bool) * desc->natts);
	/* one pass over the row, not one per column after the first text */
	heap_deform_tuple(post, desc, row, rownull);
	for (i = 0; i < (int) lengthof(post_cols); i++)
		if (rownull[atts[i] - 1])
			elog(ERROR, "unexpected null in column %s", post_cols[i]);
	post_id = DatumGetInt32(row[atts[0] - 1]);
	author_id = DatumGetInt32(row[atts[1] - 1]);
	values[COL_TITLE] = PointerGetDatum(PG_DETOAST_DATUM_PACKED(row[atts[2] - 1]));
	values[COL_BODY] = PointerGetDatum(PG_DETOAST_DATUM_PACKED(row[atts[3] - 1]));
	values[COL_PUBLISHED] = row[atts[4] - 1];
	table_close(posts, NoLock);

	fetch_author(nsp, author_id, values);
	fetch_tags(nsp, post_id, values);
	fetch_comments(nsp, post_id, values);

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}
