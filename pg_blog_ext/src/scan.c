/*-------------------------------------------------------------------------
 *
 * scan.c
 *	  Direct index scans of the blog's tables, for the reads where the
 *	  executor's start-up, sorts and hashes would cost more than the reads.
 *
 *	  Relations are found by name in the namespace "blog", never through
 *	  the search_path, and locked as a query reading them would lock them.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

int
blog_idslot_cmp(const void *a, const void *b)
{
	int32		x = ((const IdSlot *) a)->id;
	int32		y = ((const IdSlot *) b)->id;

	return (x > y) - (x < y);
}

/*
 * The OIDs of the namespace "blog" and of the relations looked up in it,
 * kept per backend: a catalog lookup per relation per call costs about a
 * tenth of a detail page.  Any invalidation of a relation or
 * namespace name forgets them all, so a lookup after DDL (DROP and CREATE
 * EXTENSION) sees what get_relname_relid() would see.
 */
typedef struct RelidCacheEntry
{
	const char *name;
	Oid			relid;
} RelidCacheEntry;

#define RELID_CACHE_SIZE 16

static RelidCacheEntry relid_cache[RELID_CACHE_SIZE];
static int	relid_cache_n = 0;
static Oid	nsp_cache = InvalidOid;
static bool relid_cache_registered = false;

static void
relid_cache_reset(Datum arg, int cacheid, uint32 hashvalue)
{
	(void) arg;
	(void) cacheid;
	(void) hashvalue;
	relid_cache_n = 0;
	nsp_cache = InvalidOid;
}

/* The namespace "blog", never found through the search_path. */
Oid
blog_nsp(void)
{
	if (!relid_cache_registered)
	{
		CacheRegisterSyscacheCallback(RELNAMENSP, relid_cache_reset, (Datum) 0);
		CacheRegisterSyscacheCallback(NAMESPACENAME, relid_cache_reset, (Datum) 0);
		relid_cache_registered = true;
	}
	if (!OidIsValid(nsp_cache))
	{
		Oid			nsp = get_namespace_oid("blog", false);

		relid_cache_n = 0;
		nsp_cache = nsp;
	}
	return nsp_cache;
}

Oid
blog_relid(Oid nsp, const char *name)
{
	Oid			relid;
	int			i;

	if (nsp == nsp_cache)
	{
		for (i = 0; i < relid_cache_n; i++)
			if (strcmp(relid_cache[i].name, name) == 0)
				return relid_cache[i].relid;
	}

	relid = get_relname_relid(name, nsp);
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation \"blog.%s\" does not exist", name),
				 errhint("Recreate the extension with DROP EXTENSION pg_blog; CREATE EXTENSION pg_blog.")));
	/* names are the callers' string constants, so the pointer is kept */
	if (nsp == nsp_cache && relid_cache_n < RELID_CACHE_SIZE)
	{
		relid_cache[relid_cache_n].name = name;
		relid_cache[relid_cache_n].relid = relid;
		relid_cache_n++;
	}
	return relid;
}

/*
 * A B-tree on heap whose first natts key columns are int4, as the scans
 * below expect; anything else is refused rather than misread.
 */
Relation
blog_open_int4_index(Oid nsp, const char *name, Relation heap, int natts)
{
	Relation	index = index_open(blog_relid(nsp, name), AccessShareLock);
	TupleDesc	desc = RelationGetDescr(index);
	bool		ok;
	int			i;

	ok = index->rd_index->indrelid == RelationGetRelid(heap) &&
		index->rd_rel->relam == BTREE_AM_OID &&
		index->rd_index->indnkeyatts >= natts;
	for (i = 0; ok && i < natts; i++)
		ok = TupleDescAttr(desc, i)->atttypid == INT4OID;
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"blog.%s\" does not have the layout pg_blog needs", name)));
	return index;
}

/*
 * For each id of sorted, walk the index entries whose first column equals
 * it and call back for each visible one, as an index-only scan does: the
 * heap is read only for pages the visibility map does not mark
 * all-visible, and a predicate lock is taken where it is not.
 */
void
blog_scan_index_only(Relation heap, Relation index, IdSlot *sorted, int n,
					 BlogEntryFn fn, void *arg)
{
	Snapshot	snapshot = GetActiveSnapshot();
	IndexScanDesc scan;
	TupleTableSlot *tslot = NULL;
	Buffer		vmbuf = InvalidBuffer;
	ScanKeyData key;
	int			i;

	scan = index_beginscan(heap, index, snapshot, 1, 0);
	scan->xs_want_itup = true;
	for (i = 0; i < n; i++)
	{
		ItemPointer tid;

		CHECK_FOR_INTERRUPTS();
		ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT4EQ,
					Int32GetDatum(sorted[i].id));
		index_rescan(scan, &key, 1, NULL, 0);
		while ((tid = index_getnext_tid(scan, ForwardScanDirection)) != NULL)
		{
			if (!VM_ALL_VISIBLE(heap, ItemPointerGetBlockNumber(tid), &vmbuf))
			{
				if (tslot == NULL)
					tslot = table_slot_create(heap, NULL);
				if (!index_fetch_heap(scan, tslot))
					continue;
				ExecClearTuple(tslot);
			}
			else
				PredicateLockPage(heap, ItemPointerGetBlockNumber(tid), snapshot);
			fn(scan, sorted[i].slot, arg);
		}
	}
	if (BufferIsValid(vmbuf))
		ReleaseBuffer(vmbuf);
	if (tslot != NULL)
		ExecDropSingleTupleTableSlot(tslot);
	index_endscan(scan);
}

/*
 * The visible row of a unique index for key, copied out of the buffer, or
 * NULL.
 */
HeapTuple
blog_fetch_unique(IndexScanDesc scan, TupleTableSlot *slot, ScanKey key)
{
	HeapTuple	tuple = NULL;

	CHECK_FOR_INTERRUPTS();
	index_rescan(scan, key, 1, NULL, 0);
	if (index_getnext_slot(scan, ForwardScanDirection, slot))
		tuple = ExecCopySlotHeapTuple(slot);
	ExecClearTuple(slot);
	return tuple;
}

AttrNumber
blog_attnum(Relation rel, const char *name)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
			return att->attnum;
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("column \"%s\" of relation \"blog.%s\" does not exist",
					name, RelationGetRelationName(rel))));
	return InvalidAttrNumber;	/* keep compiler quiet */
}

/* The attribute numbers of the columns names[0 .. n) of rel. */
void
blog_attnums(Relation rel, const char *const *names, int n, AttrNumber *out)
{
	int			i;

	for (i = 0; i < n; i++)
		out[i] = blog_attnum(rel, names[i]);
}

/*
 * The values of the columns atts[0 .. n) of the row in slot, deformed once
 * (heap_getattr() per column would walk the row again for every column
 * after the first text one).
 */
void
blog_slot_values(TupleTableSlot *slot, const AttrNumber *atts, int n,
				 Datum *values, bool *isnull)
{
	AttrNumber	max = 0;
	int			i;

	for (i = 0; i < n; i++)
		max = Max(max, atts[i]);
	slot_getsomeattrs(slot, max);
	for (i = 0; i < n; i++)
	{
		values[i] = slot->tts_values[atts[i] - 1];
		isnull[i] = slot->tts_isnull[atts[i] - 1];
	}
}

/*
 * Rough costs, in instructions, of reading rows by key (a B-tree descent
 * and a heap fetch per key) and of reading a whole table, measured with
 * callgrind on PostgreSQL 15.  As the planner does, a read of many keys of
 * a small table reads it whole.
 */
#define PROBE_COST	7000.0
#define PAGE_COST	1500.0
#define ROW_COST	450.0

static bool
scan_is_cheaper(Relation rel, int n)
{
	double		pages = rel->rd_rel->relpages;
	double		tuples = rel->rd_rel->reltuples;

	/* never vacuumed or analyzed: its size is unknown */
	if (tuples < 0)
		return false;
	return pages * PAGE_COST + tuples * ROW_COST < n * PROBE_COST;
}

static int
int32_cmp(const void *a, const void *b)
{
	int32		x = *(const int32 *) a;
	int32		y = *(const int32 *) b;

	return (x > y) - (x < y);
}

/* blog_fetch_by_int4() by one pass over the table, keeping the rows of ids. */
static int
fetch_by_scan(Relation rel, AttrNumber keyatt, const int32 *ids, int n,
			  const AttrNumber *atts, int ncols, BlogRowFn fn, void *arg)
{
	int32	   *sorted = palloc(sizeof(int32) * n);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	TableScanDesc scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	int			found = 0;

	memcpy(sorted, ids, sizeof(int32) * n);
	qsort(sorted, n, sizeof(int32), int32_cmp);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		Datum		values[BLOG_MAX_COLS];
		bool		isnull[BLOG_MAX_COLS];
		Datum		key;
		bool		key_null;
		int32		id;

		CHECK_FOR_INTERRUPTS();
		/* the other columns of the rows not wanted are not deformed */
		key = slot_getattr(slot, keyatt, &key_null);
		id = DatumGetInt32(key);
		if (key_null || bsearch(&id, sorted, n, sizeof(int32), int32_cmp) == NULL)
			continue;
		blog_slot_values(slot, atts, ncols, values, isnull);
		fn(values, isnull, arg);
		found++;
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	pfree(sorted);
	return found;
}

/* blog_fetch_by_int4() by one descent of the unique index per key. */
static int
fetch_by_probes(Relation rel, Relation index, const int32 *ids, int n,
				const AttrNumber *atts, int ncols, BlogRowFn fn, void *arg)
{
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	IndexScanDesc scan = index_beginscan(rel, index, GetActiveSnapshot(), 1, 0);
	int			found = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		ScanKeyData key;

		CHECK_FOR_INTERRUPTS();
		ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT4EQ,
					Int32GetDatum(ids[i]));
		index_rescan(scan, &key, 1, NULL, 0);
		if (index_getnext_slot(scan, ForwardScanDirection, slot))
		{
			Datum		values[BLOG_MAX_COLS];
			bool		isnull[BLOG_MAX_COLS];

			blog_slot_values(slot, atts, ncols, values, isnull);
			fn(values, isnull, arg);
			found++;
		}
		ExecClearTuple(slot);
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	return found;
}

/*
 * Call fn with the columns cols of each visible row of a table whose key,
 * the int4 first column of the unique index index_name, is one of ids
 * (distinct), in no particular order; returns how many rows there are.
 * The rows are read in place, by key or by a pass over the table,
 * whichever costs less: only what fn keeps of them is copied.
 */
int
blog_fetch_by_int4(Oid nsp, const char *table, const char *index_name,
				   const int32 *ids, int n, const char *const *cols,
				   int ncols, BlogRowFn fn, void *arg)
{
	Relation	rel = table_open(blog_relid(nsp, table), AccessShareLock);
	Relation	index = blog_open_int4_index(nsp, index_name, rel, 1);
	AttrNumber	keyatt = index->rd_index->indkey.values[0];
	AttrNumber	atts[BLOG_MAX_COLS];
	int			found;

	if (ncols > BLOG_MAX_COLS)
		elog(ERROR, "too many columns asked of blog.%s", table);
	if (!index->rd_index->indisunique || keyatt == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"blog.%s\" does not have the layout pg_blog needs",
						index_name)));
	blog_attnums(rel, cols, ncols, atts);
	if (n == 0)
		found = 0;
	else if (scan_is_cheaper(rel, n))
		found = fetch_by_scan(rel, keyatt, ids, n, atts, ncols, fn, arg);
	else
		found = fetch_by_probes(rel, index, ids, n, atts, ncols, fn, arg);
	index_close(index, NoLock);
	table_close(rel, NoLock);
	return found;
}

/*
 * The visible row of rel whose unique text index index_name holds key,
 * copied, or NULL.  The key is compared with the index's own collation, as
 * a query would compare it.
 */
HeapTuple
blog_fetch_by_text(Oid nsp, Relation rel, const char *index_name, Datum value)
{
	Relation	index = index_open(blog_relid(nsp, index_name), AccessShareLock);
	TupleTableSlot *slot;
	IndexScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;

	if (index->rd_index->indrelid != RelationGetRelid(rel) ||
		index->rd_rel->relam != BTREE_AM_OID ||
		TupleDescAttr(RelationGetDescr(index), 0)->atttypid != TEXTOID)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"blog.%s\" does not have the layout pg_blog needs",
						index_name)));

	ScanKeyEntryInitialize(&key, 0, 1, BTEqualStrategyNumber, InvalidOid,
						   index->rd_indcollation[0], F_TEXTEQ, value);
	slot = table_slot_create(rel, NULL);
	scan = index_beginscan(rel, index, GetActiveSnapshot(), 1, 0);
	tuple = blog_fetch_unique(scan, slot, &key);
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	index_close(index, NoLock);
	return tuple;
}

/* A NOT NULL text column, detoasted so that no result points into TOAST. */
Datum
blog_text_attr(HeapTuple tuple, TupleDesc desc, AttrNumber attnum)
{
	bool		isnull;
	Datum		d = heap_getattr(tuple, attnum, desc, &isnull);

	if (isnull)
		elog(ERROR, "unexpected null in column %d", attnum);
	return PointerGetDatum(PG_DETOAST_DATUM_PACKED(d));
}

int32
blog_int4_attr(HeapTuple tuple, TupleDesc desc, AttrNumber attnum)
{
	bool		isnull;
	Datum		d = heap_getattr(tuple, attnum, desc, &isnull);

	if (isnull)
		elog(ERROR, "unexpected null in column %d", attnum);
	return DatumGetInt32(d);
}

typedef struct IdList
{
	int32	   *ids;
	int			n;
	int			cap;
} IdList;

static void
collect_second_id(IndexScanDesc scan, int slot, void *arg)
{
	IdList	   *list = (IdList *) arg;
	bool		isnull;
	Datum		id = index_getattr(scan->xs_itup, 2, scan->xs_itupdesc, &isnull);

	(void) slot;
	if (isnull)
		return;
	if (list->n == list->cap)
	{
		list->cap *= 2;
		list->ids = repalloc(list->ids, sizeof(int32) * list->cap);
	}
	list->ids[list->n++] = DatumGetInt32(id);
}

/*
 * The other side of the post_tags links of one id: through the index on
 * (first, second), the visible entries' second column, in index order (so
 * sorted and distinct).  A post's tag ids from post_tags_pkey, a tag's
 * post ids from post_tags_tag_idx.
 */
int32 *
blog_linked_ids(Oid nsp, const char *index_name, int32 id, int *n)
{
	Relation	post_tags = table_open(blog_relid(nsp, "post_tags"), AccessShareLock);
	Relation	index = blog_open_int4_index(nsp, index_name, post_tags, 2);
	IdSlot		key;
	IdList		list;

	key.id = id;
	key.slot = 0;
	list.cap = 16;
	list.n = 0;
	list.ids = palloc(sizeof(int32) * list.cap);
	blog_scan_index_only(post_tags, index, &key, 1, collect_second_id, &list);
	index_close(index, NoLock);
	table_close(post_tags, NoLock);
	*n = list.n;
	return list.ids;
}
