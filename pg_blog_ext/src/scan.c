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
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

int
blog_idslot_cmp(const void *a, const void *b)
{
	int32		x = ((const IdSlot *) a)->id;
	int32		y = ((const IdSlot *) b)->id;

	return (x > y) - (x < y);
}

Oid
blog_relid(Oid nsp, const char *name)
{
	Oid			relid = get_relname_relid(name, nsp);

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation \"blog.%s\" does not exist", name),
				 errhint("Recreate the extension with DROP EXTENSION pg_blog; CREATE EXTENSION pg_blog.")));
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

/*
 * Probe a table's unique int4 index for each of ids and keep the visible
 * rows, copied; returns how many there are.  *desc is the table's row type.
 */
int
blog_fetch_by_int4(Oid nsp, const char *table, const char *index_name,
				   int32 *ids, int n, HeapTuple *out, TupleDesc *desc)
{
	Relation	rel = table_open(blog_relid(nsp, table), AccessShareLock);
	Relation	index = blog_open_int4_index(nsp, index_name, rel, 1);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	IndexScanDesc scan = index_beginscan(rel, index, GetActiveSnapshot(), 1, 0);
	int			found = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		ScanKeyData key;
		HeapTuple	tuple;

		ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT4EQ,
					Int32GetDatum(ids[i]));
		tuple = blog_fetch_unique(scan, slot, &key);
		if (tuple != NULL)
			out[found++] = tuple;
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	index_close(index, NoLock);
	*desc = RelationGetDescr(rel);
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
