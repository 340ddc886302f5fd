/* SPDX-License-Identifier: Apache-2.0 */
/*-------------------------------------------------------------------------
 *
 * scan.c
 *	  The blog's relations, and reads of their rows by key through the
 *	  index access method's interface (index_beginscan() and the calls
 *	  after it), for the reads where the executor's start-up, sorts and
 *	  hashes would cost more than the reads.
 *
 *	  Relations are found by name in the namespace "blog", never through
 *	  the search_path, and locked as a query reading them would lock them.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/sinval.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

/* The names of the relations of BlogRel, in its order */
#define REL_NAME(name) #name,
static const char *const rel_names[BLOG_NUM_RELS] = {BLOG_RELATIONS(REL_NAME)};
#undef REL_NAME

/*
 * The OIDs of the namespace "blog" and of its relations, kept per backend
 * once looked up: a catalog lookup per relation per call costs about a
 * tenth of a detail page.  Any invalidation of a relation or namespace
 * name forgets them all, so a lookup after DDL (DROP and CREATE EXTENSION,
 * ALTER EXTENSION UPDATE) sees what get_relname_relid() would see.  Only
 * names are kept, never rows; a relation that the schema does not have is
 * looked up again on the next call.
 */
static Oid	relid_cache[BLOG_NUM_RELS];
static Oid	nsp_cache = InvalidOid;
static bool relid_cache_registered = false;

static void
relid_cache_reset(Datum arg, int cacheid, uint32 hashvalue)
{
	(void) arg;
	(void) cacheid;
	(void) hashvalue;
	memset(relid_cache, 0, sizeof(relid_cache));
	nsp_cache = InvalidOid;
}

static Oid
lookup_relid(BlogRel rel)
{
	if (!relid_cache_registered)
	{
		CacheRegisterSyscacheCallback(RELNAMENSP, relid_cache_reset, (Datum) 0);
		CacheRegisterSyscacheCallback(NAMESPACENAME, relid_cache_reset, (Datum) 0);
		relid_cache_registered = true;
	}
	if (OidIsValid(relid_cache[rel]))
		return relid_cache[rel];

	if (!OidIsValid(nsp_cache))
		nsp_cache = get_namespace_oid("blog", false);
	relid_cache[rel] = get_relname_relid(rel_names[rel], nsp_cache);
	return relid_cache[rel];
}

/*
 * The snapshot of a page's reads.  A query takes its locks before its
 * snapshot: one that waited for the lock of a transaction that replaced a
 * relation (DROP and CREATE EXTENSION) or changed it (ALTER EXTENSION
 * UPDATE) sees what that transaction committed.  A page function takes its
 * locks as it reads, under the snapshot of the statement that called it:
 * the rows of tables created after it are not in that snapshot, and the
 * page would come out empty.  So, under READ COMMITTED, once a relation is
 * locked whose catalog row that snapshot does not see, the rest of the
 * page reads with a snapshot taken then, as a statement that waited for
 * the lock would, and as each statement of a VOLATILE function does.
 * Under REPEATABLE READ and SERIALIZABLE, and in parallel mode, the reads
 * keep the statement's snapshot, as any query there does.
 */
static bool reads_snapshot_pushed = false;

/* Before a page's first read */
void
blog_reads_begin(void)
{
	reads_snapshot_pushed = false;
}

/* After its last (an error on the way pops the snapshot with the rest) */
void
blog_reads_end(void)
{
	if (reads_snapshot_pushed)
		PopActiveSnapshot();
	reads_snapshot_pushed = false;
}

/* The transaction that created or last changed relid's pg_class row */
static TransactionId
relation_changed_by(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	TransactionId xmin;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	xmin = HeapTupleHeaderGetXmin(tup->t_data);
	ReleaseSysCache(tup);
	return xmin;
}

static void
read_past_change(Oid relid)
{
	TransactionId xmin;

	if (reads_snapshot_pushed || IsolationUsesXactSnapshot() ||
		IsInParallelMode())
		return;
	xmin = relation_changed_by(relid);
	if (TransactionIdIsNormal(xmin) &&
		!TransactionIdIsCurrentTransactionId(xmin) &&
		XidInMVCCSnapshot(xmin, GetActiveSnapshot()))
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		reads_snapshot_pushed = true;
	}
}

/*
 * The OID of rel, locked AccessShareLock, or InvalidOid when the schema
 * has no such relation and missing_ok.
 *
 * As RangeVarGetRelidExtended() does: a call that waited for the lock of a
 * transaction that dropped the relation (DROP EXTENSION, and CREATE
 * EXTENSION again) looked its name up before that transaction committed,
 * and holds a lock on an OID that is gone.  Taking the lock took in the
 * invalidations that the commit sent, which forgot the cached OIDs: when
 * any came, the name is looked up again, until it names the relation
 * locked, and the reads may need a newer snapshot (read_past_change()).
 */
static Oid
lock_relid(BlogRel rel, bool missing_ok)
{
	Oid			relid;
	Oid			locked = InvalidOid;
	bool		invalidated = false;

	for (;;)
	{
		uint64		inval_count = SharedInvalidMessageCounter;

		relid = lookup_relid(rel);
		if (invalidated && relid == locked)
			break;
		if (OidIsValid(locked))
			UnlockRelationOid(locked, AccessShareLock);
		locked = relid;
		if (OidIsValid(relid))
			LockRelationOid(relid, AccessShareLock);
		else
			AcceptInvalidationMessages();
		if (inval_count == SharedInvalidMessageCounter)
			break;
		invalidated = true;
	}
	if (!OidIsValid(relid))
	{
		if (missing_ok)
			return InvalidOid;
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation \"blog.%s\" does not exist", rel_names[rel]),
				 errdetail("pg_blog's functions read the relations its extension scripts create.")));
	}
	if (invalidated)
		read_past_change(relid);
	return relid;
}

Relation
blog_open_table(BlogRel table)
{
	return table_open(lock_relid(table, false), NoLock);
}

void
blog_refuse_layout(Relation index)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("index \"blog.%s\" does not have the layout pg_blog needs",
					RelationGetRelationName(index))));
}

/*
 * A B-tree of heap, locked by lock_relid(); anything else is refused
 * rather than misread.
 */
static Relation
open_btree(Oid indexid, Relation heap)
{
	Relation	rel = index_open(indexid, NoLock);

	if (rel->rd_index->indrelid != RelationGetRelid(heap) ||
		rel->rd_rel->relam != BTREE_AM_OID)
		blog_refuse_layout(rel);
	return rel;
}

Relation
blog_open_index(BlogRel index, Relation heap)
{
	return open_btree(lock_relid(index, false), heap);
}

/*
 * Refuse an index unless its first natts key columns are int4, the first
 * in the default ascending order with nulls last, as blog_index_lookup()
 * reads it.
 */
static Relation
check_int4_index(Relation rel, int natts)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			i;

	if (rel->rd_index->indnkeyatts < natts ||
		rel->rd_opfamily[0] != INTEGER_BTREE_FAM_OID ||
		rel->rd_opcintype[0] != INT4OID ||
		rel->rd_indoption[0] != 0)
		blog_refuse_layout(rel);
	for (i = 0; i < natts; i++)
		if (TupleDescAttr(desc, i)->atttypid != INT4OID)
			blog_refuse_layout(rel);
	return rel;
}

/* A B-tree of heap read by its int4 columns (check_int4_index()) */
Relation
blog_open_int4_index(BlogRel index, Relation heap, int natts)
{
	return check_int4_index(blog_open_index(index, heap), natts);
}

/* The attribute number of the column name of rel, or InvalidAttrNumber */
static AttrNumber
find_attnum(Relation rel, const char *name)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
			return att->attnum;
	}
	return InvalidAttrNumber;
}

AttrNumber
blog_attnum(Relation rel, const char *name)
{
	AttrNumber	attnum = find_attnum(rel, name);

	if (attnum != InvalidAttrNumber)
		return attnum;
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("column \"%s\" of relation \"blog.%s\" does not exist",
					name, RelationGetRelationName(rel)),
			 errdetail("pg_blog's functions read the columns its extension scripts create.")));
	return InvalidAttrNumber;	/* keep compiler quiet */
}

/* Every column the pages read is NOT NULL: a null is a broken table. */
static void
unexpected_null(const char *column)
{
	ereport(ERROR,
			(errcode(ERRCODE_NOT_NULL_VIOLATION),
			 errmsg("unexpected null in column \"%s\" of a table of blog", column)));
}

/*
 * values[i] = the column atts[i] (named names[i]) of a deformed row, whose
 * attribute k is all[k - 1] (null if isnull[k - 1]); (Datum) 0 for a
 * column the schema lacks (InvalidAttrNumber).
 */
static void
pick_values(const Datum *all, const bool *isnull, const AttrNumber *atts,
			const char *const *names, int n, Datum *values)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		if (atts[i] == InvalidAttrNumber)
			values[i] = (Datum) 0;
		else if (isnull[atts[i] - 1])
			unexpected_null(names[i]);
		else
			values[i] = all[atts[i] - 1];
	}
}

/*
 * The values of the columns atts[0 .. n) (named names) of the row in slot,
 * deformed once.
 */
static void
slot_values(TupleTableSlot *slot, const AttrNumber *atts,
			const char *const *names, int n, Datum *values)
{
	AttrNumber	max = 0;
	int			i;

	for (i = 0; i < n; i++)
		max = Max(max, atts[i]);
	slot_getsomeattrs(slot, max);
	pick_values(slot->tts_values, slot->tts_isnull, atts, names, n, values);
}

/*
 * blog_index_lookup(): the entries of many keys through the index access
 * method's public interface.
 *
 * Keys far apart go to the B-tree as one array (SK_SEARCHARRAY), as the
 * executor passes "key = ANY($1)"; the B-tree sorts them and returns the
 * entries in index order.  Before PostgreSQL 17 it descends from the root
 * once per key; from 17 on it walks the leaf level from key to key when
 * they are close, and descends when they are not.  Either way a descent
 * costs as much as passing over some ten entries (measured with
 * bench/callgrind.sh on 15 and 17), so runs of keys closer than that, by
 * the column's statistics, are read as one range instead, and the entries
 * between them are passed over before any heap access.  The runs and the
 * arrays are read in key order, so the entries still come in index order.
 *
 * The B-tree takes its own predicate locks, checks for old snapshots and
 * copies the entries of a leaf page out before it releases the page's
 * lock, so nothing here runs while a buffer is locked: the callbacks
 * detoast and palloc freely (a heap row is only pinned, in its slot).
 *
 * Visibility is an index-only scan's when the caller wants no row: the
 * visibility map for heap pages all-visible, the heap otherwise.  Under
 * SERIALIZABLE the heap is always read, so that the heap access method
 * takes the predicate locks on the rows read, which an index-only scan
 * would otherwise have to take by hand.
 */
typedef struct LookupState
{
	Relation	heap;
	Relation	index;
	bool		want_rows;
	bool		use_vm;
	Buffer		vmbuf;
	TupleTableSlot *slot;		/* created on the first heap read */
	IndexScanDesc scans[2];		/* with 1 and 2 scan keys, made when needed */
	BlogEntryFn fn;
	void	   *arg;
} LookupState;

/*
 * Is the row of the scan's current entry visible?  With want_rows, or
 * when the visibility map does not say so, the heap says, and st->slot
 * holds the row.
 */
static bool
entry_visible(LookupState *st, IndexScanDesc scan, ItemPointer tid)
{
	if (st->use_vm &&
		VM_ALL_VISIBLE(st->heap, ItemPointerGetBlockNumber(tid), &st->vmbuf))
		return true;
	if (st->slot == NULL)
		st->slot = table_slot_create(st->heap, NULL);
	if (!index_fetch_heap(scan, st->slot))
		return false;
	/* only a non-MVCC snapshot finds several rows per entry */
	if (scan->xs_heap_continue)
		elog(ERROR, "non-MVCC snapshots are not supported by pg_blog's reads");
	return true;
}

/*
 * Run a scan of nskeys keys skey and call fn for each visible entry whose
 * first column is one of keys[0 .. nkeys) (sorted, distinct), with the
 * entry's key number first + its place there; without keys (a text key),
 * every entry, numbered 0.  Entries of other keys (a range's) are passed
 * over before their visibility is looked at.
 */
static void
lookup_scan(LookupState *st, ScanKey skey, int nskeys, const int32 *keys,
			int nkeys, int first)
{
	IndexScanDesc scan = st->scans[nskeys - 1];
	ItemPointer tid;
	BlogEntry	entry;
	int			cur = 0;

	if (scan == NULL)
	{
		scan = blog_index_beginscan(st->heap, st->index, GetActiveSnapshot(),
									nskeys, 0);
		/* the entries' own columns: the key's number, and index-only reads */
		scan->xs_want_itup = true;
		st->scans[nskeys - 1] = scan;
	}
	index_rescan(scan, skey, nskeys, NULL, 0);

	while ((tid = index_getnext_tid(scan, ForwardScanDirection)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		entry.itup = scan->xs_itup;
		entry.itupdesc = scan->xs_itupdesc;
		entry.key = first;
		if (keys != NULL && nkeys > 1)
		{
			int32		k = blog_entry_int4(&entry, 1);

			/* the entries come in key order: the key is at or after cur */
			while (cur < nkeys && keys[cur] < k)
				cur++;
			if (cur >= nkeys)
				break;
			if (keys[cur] != k)
				continue;
			entry.key = first + cur;
		}
		if (!entry_visible(st, scan, tid))
			continue;
		entry.row = st->want_rows ? st->slot : NULL;
		st->fn(&entry, st->arg);
	}
}

static void
lookup_begin(LookupState *st, Relation heap, Relation index, bool want_rows,
			 BlogEntryFn fn, void *arg)
{
	st->heap = heap;
	st->index = index;
	st->want_rows = want_rows;
	st->use_vm = !want_rows && !IsolationIsSerializable();
	st->vmbuf = InvalidBuffer;
	st->slot = NULL;
	st->scans[0] = st->scans[1] = NULL;
	st->fn = fn;
	st->arg = arg;
}

static void
lookup_end(LookupState *st)
{
	int			i;

	for (i = 0; i < (int) lengthof(st->scans); i++)
		if (st->scans[i] != NULL)
			index_endscan(st->scans[i]);
	if (BufferIsValid(st->vmbuf))
		ReleaseBuffer(st->vmbuf);
	if (st->slot != NULL)
		ExecDropSingleTupleTableSlot(st->slot);
}

/* The entries of keys[0 .. nkeys) (sorted, distinct) by one scan key */
static void
lookup_int4_keys(LookupState *st, const int32 *keys, int nkeys, int first)
{
	ScanKeyData skey;

	if (nkeys == 1)
		ScanKeyEntryInitialize(&skey, 0, 1, BTEqualStrategyNumber, INT4OID,
							   InvalidOid, F_INT4EQ, Int32GetDatum(keys[0]));
	else
	{
		Datum	   *elems = palloc(sizeof(Datum) * nkeys);
		int			i;

		for (i = 0; i < nkeys; i++)
			elems[i] = Int32GetDatum(keys[i]);
		ScanKeyEntryInitialize(&skey, SK_SEARCHARRAY, 1, BTEqualStrategyNumber,
							   INT4OID, InvalidOid, F_INT4EQ,
							   PointerGetDatum(construct_array(elems, nkeys, INT4OID,
															   sizeof(int32), true,
															   TYPALIGN_INT)));
	}
	lookup_scan(st, &skey, 1, keys, nkeys, first);
}

/*
 * How many entries between two keys cost as much as a descent from the
 * root: measured with bench/callgrind.sh on PostgreSQL 15, a descent costs
 * about 4 500 instructions and an entry passed over in a range about 350
 * (the B-tree's key checks and copy, then the entry's key here); the tag
 * page costs 5% less with 10 than with 20.
 */
#define RANGE_GAP_ENTRIES 10.0

/*
 * The index's entries per value of its first column, by the statistics of
 * the table's column (ANALYZE, or the VACUUM (ANALYZE) of the set-up);
 * one for a unique index on one column; -1 when unknown.
 */
static double
entries_per_key(Relation heap, Relation index)
{
	AttrNumber	attnum = index->rd_index->indkey.values[0];
	double		reltuples = heap->rd_rel->reltuples;
	double		ndistinct = 0;
	HeapTuple	tuple;

	if (index->rd_index->indisunique && index->rd_index->indnkeyatts == 1)
		return 1.0;
	if (attnum == 0 || reltuples <= 0)
		return -1.0;
	tuple = SearchSysCache3(STATRELATTINH,
							ObjectIdGetDatum(RelationGetRelid(heap)),
							Int16GetDatum(attnum), BoolGetDatum(false));
	if (HeapTupleIsValid(tuple))
	{
		ndistinct = ((Form_pg_statistic) GETSTRUCT(tuple))->stadistinct;
		ReleaseSysCache(tuple);
	}
	if (ndistinct < 0)
		ndistinct = -ndistinct * reltuples;
	return ndistinct >= 1 ? reltuples / ndistinct : -1.0;
}

/*
 * Call fn for each visible entry of index (a B-tree of heap opened with
 * blog_open_int4_index()) whose first column is one of keys[0 .. nkeys),
 * which must be sorted and distinct, in index order; with want_rows, each
 * entry comes with its visible heap row.
 */
void
blog_index_lookup(Relation heap, Relation index, const int32 *keys, int nkeys,
				  bool want_rows, BlogEntryFn fn, void *arg)
{
	LookupState st;

	if (nkeys == 0)
		return;
	lookup_begin(&st, heap, index, want_rows, fn, arg);
	if (nkeys == 1)
		lookup_int4_keys(&st, keys, nkeys, 0);
	else
	{
		double		per_key = entries_per_key(heap, index);
		int			i = 0;

		/*
		 * Runs of close keys as ranges, the keys between them by one array:
		 * in key order, so that the entries still come in index order.
		 */
		while (i < nkeys)
		{
			int			j = i;
			int			k;

			while (j + 1 < nkeys && per_key >= 0 &&
				   ((double) keys[j + 1] - keys[j] - 1) * per_key <= RANGE_GAP_ENTRIES)
				j++;
			if (j > i)
			{
				ScanKeyData skeys[2];

				ScanKeyEntryInitialize(&skeys[0], 0, 1, BTGreaterEqualStrategyNumber,
									   INT4OID, InvalidOid, F_INT4GE,
									   Int32GetDatum(keys[i]));
				ScanKeyEntryInitialize(&skeys[1], 0, 1, BTLessEqualStrategyNumber,
									   INT4OID, InvalidOid, F_INT4LE,
									   Int32GetDatum(keys[j]));
				lookup_scan(&st, skeys, 2, keys + i, j - i + 1, i);
				i = j + 1;
				continue;
			}
			/* the keys up to the next run of close keys */
			for (k = i + 1; k + 1 < nkeys; k++)
				if (per_key >= 0 &&
					((double) keys[k + 1] - keys[k] - 1) * per_key <= RANGE_GAP_ENTRIES)
					break;
			if (k + 1 >= nkeys)
				k = nkeys;
			lookup_int4_keys(&st, keys + i, k - i, i);
			i = k;
		}
	}
	lookup_end(&st);
}

/*
 * The same for one key of the index's first column, text with the default
 * operator class (blog_fetch_by_text() refuses any other), compared with
 * the index's collation, as a query would compare it.
 */
static void
index_lookup_text(Relation heap, Relation index, Datum key, bool want_rows,
				  BlogEntryFn fn, void *arg)
{
	LookupState st;
	ScanKeyData skey;

	ScanKeyEntryInitialize(&skey, 0, 1, BTEqualStrategyNumber, TEXTOID,
						   index->rd_indcollation[0], F_TEXTEQ, key);
	lookup_begin(&st, heap, index, want_rows, fn, arg);
	lookup_scan(&st, &skey, 1, NULL, 1, 0);
	lookup_end(&st);
}

/* A NOT NULL int4 column of an entry's index tuple. */
int32
blog_entry_int4(const BlogEntry *entry, AttrNumber attnum)
{
	bool		isnull;
	Datum		d = index_getattr(entry->itup, attnum, entry->itupdesc, &isnull);

	if (isnull)
	{
		Form_pg_attribute att = TupleDescAttr(entry->itupdesc, attnum - 1);

		unexpected_null(NameStr(att->attname));
	}
	return DatumGetInt32(d);
}

static void
collect_second_id(const BlogEntry *entry, void *arg)
{
	List	  **ids = (List **) arg;

	*ids = lappend_int(*ids, blog_entry_int4(entry, 2));
}

/*
 * The other side of the post_tags links of one id: through the index on
 * (first, second), the visible entries' second column, in index order (so
 * sorted and distinct); the tag page reads a tag's post ids so, from
 * post_tags_tag_idx.
 */
List *
blog_linked_ids(BlogRel index_rel, int32 id)
{
	Relation	post_tags = blog_open_table(BLOG_REL_post_tags);
	Relation	index = blog_open_int4_index(index_rel, post_tags, 2);
	List	   *ids = NIL;

	blog_index_lookup(post_tags, index, &id, 1, false, collect_second_id, &ids);
	index_close(index, NoLock);
	table_close(post_tags, NoLock);
	return ids;
}

/*
 * The reads by key of the pages (BlogRead): the table, the index walked
 * and the columns returned, in order.  The library serves a schema of
 * every version ever released, until ALTER EXTENSION pg_blog UPDATE brings
 * it to the library's: one of version 1.0 has none of the covering indexes
 * (1.1 made them) and is read through index_1_0, which has the same key,
 * from the heap; one before 1.3 has only the first ncols_1_0 columns of a
 * read, the columns after them reading as (Datum) 0 (the posts' copies of
 * their comment counts and tag ids, which blog_posts_copies() finds where
 * they are kept in such a schema).
 */
typedef struct BlogReadDef
{
	BlogRel		table;
	BlogRel		index;
	BlogRel		index_1_0;
	int			ncols;
	int			ncols_1_0;
	const char *cols[BLOG_MAX_COLS];
} BlogReadDef;

/* in the order of BlogPostCol */
#define POST_CARD_COLS "id", "author_id", "slug", "title", "summary", \
	"published_at", "comment_count", "tag_ids"

static const BlogReadDef read_defs[BLOG_NUM_READS] = {
	[BLOG_READ_CARDS_BY_ID] = {
		BLOG_REL_posts, BLOG_REL_posts_card_idx, BLOG_REL_posts_pkey,
		8, 6, {POST_CARD_COLS}
	},
	[BLOG_READ_CARDS_LATEST] = {
		BLOG_REL_posts, BLOG_REL_posts_published_idx,
		BLOG_REL_posts_published_idx, 8, 6, {POST_CARD_COLS}
	},
	[BLOG_READ_POST_BY_SLUG] = {
		BLOG_REL_posts, BLOG_REL_posts_slug_key, BLOG_REL_posts_slug_key,
		6, 5, {"id", "author_id", "title", "body", "published_at", "tag_ids"}
	},
	[BLOG_READ_AUTHOR_NAMES] = {
		BLOG_REL_authors, BLOG_REL_authors_name_idx, BLOG_REL_authors_pkey,
		1, 1, {"name"}
	},
	[BLOG_READ_TAG_TEXTS] = {
		BLOG_REL_tags, BLOG_REL_tags_text_idx, BLOG_REL_tags_pkey,
		2, 2, {"slug", "name"}
	},
	[BLOG_READ_TAG_BY_SLUG] = {
		BLOG_REL_tags, BLOG_REL_tags_slug_key, BLOG_REL_tags_slug_key,
		2, 2, {"id", "name"}
	},
	[BLOG_READ_COMMENTS] = {
		BLOG_REL_comments, BLOG_REL_comments_post_idx,
		BLOG_REL_comments_post_idx, 3, 3, {"author_name", "body", "created_at"}
	},
};

/*
 * The index of a read: its own, or in a schema of version 1.0 the one that
 * has the same key.
 */
static Relation
open_read_index(const BlogReadDef *def, Relation heap)
{
	Oid			indexid = lock_relid(def->index, def->index_1_0 != def->index);

	if (!OidIsValid(indexid))
		indexid = lock_relid(def->index_1_0, false);
	return open_btree(indexid, heap);
}

/*
 * Where a read finds its columns: in the index when it holds them all (key
 * or INCLUDE columns), which makes the read index-only, else in the heap
 * row; InvalidAttrNumber for a column the schema lacks.  Kept per backend
 * for each read, like the relation OIDs (a name lookup per column per call
 * costs more than the read of a tag), with the index they were found in,
 * and forgotten on any relation cache invalidation, which any DDL on the
 * table or the index sends.
 */
typedef struct ReadColumns
{
	Oid			indexid;		/* InvalidOid: not found yet */
	bool		index_only;
	AttrNumber	atts[BLOG_MAX_COLS];
	TransactionId added_by;		/* newest xmin of the pg_attribute rows of
								 * the columns after ncols_1_0 */
} ReadColumns;

static ReadColumns read_columns[BLOG_NUM_READS];
static bool read_columns_registered = false;

static void
read_columns_reset(Datum arg, Oid relid)
{
	(void) arg;
	(void) relid;
	memset(read_columns, 0, sizeof(read_columns));
}

/* The column of index that holds the column att of its table, or 0 */
static AttrNumber
index_column(Relation index, AttrNumber att)
{
	int			j;

	for (j = 0; j < index->rd_index->indnatts; j++)
		if (index->rd_index->indkey.values[j] == att)
			return j + 1;
	return InvalidAttrNumber;
}

/* The transaction that added column att of rel (its pg_attribute row's) */
static TransactionId
column_added_by(Relation rel, AttrNumber att)
{
	HeapTuple	tup = SearchSysCache2(ATTNUM,
									  ObjectIdGetDatum(RelationGetRelid(rel)),
									  Int16GetDatum(att));
	TransactionId xmin;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for attribute %d of relation %u",
			 att, RelationGetRelid(rel));
	xmin = HeapTupleHeaderGetXmin(tup->t_data);
	ReleaseSysCache(tup);
	return xmin;
}

static void
find_columns(ReadColumns *c, const BlogReadDef *def, Relation rel,
			 Relation index)
{
	AttrNumber	in_index[BLOG_MAX_COLS] = {0};
	int			i;

	c->indexid = InvalidOid;	/* valid again only once all are found */
	c->index_only = true;
	c->added_by = InvalidTransactionId;
	for (i = 0; i < def->ncols; i++)
	{
		/* only the columns after the first ncols_1_0 may be missing */
		c->atts[i] = i < def->ncols_1_0 ?
			blog_attnum(rel, def->cols[i]) : find_attnum(rel, def->cols[i]);
		if (c->atts[i] == InvalidAttrNumber)
			continue;
		if (i >= def->ncols_1_0)
		{
			TransactionId xmin = column_added_by(rel, c->atts[i]);

			if (!TransactionIdIsValid(c->added_by)
				|| TransactionIdFollows(xmin, c->added_by))
				c->added_by = xmin;
		}
		in_index[i] = index_column(index, c->atts[i]);
		if (in_index[i] == InvalidAttrNumber)
			c->index_only = false;
	}
	if (c->index_only)
		memcpy(c->atts, in_index, sizeof(c->atts));
	c->indexid = RelationGetRelid(index);
}

typedef struct FetchState
{
	Relation	index;
	const char *const *cols;
	int			ncols;
	bool		index_only;
	AttrNumber	atts[BLOG_MAX_COLS];
	bool	   *found;
	BlogRowFn	fn;
	void	   *arg;
} FetchState;

static void
fetch_prepare(FetchState *st, BlogRead read, Relation rel, Relation index,
			  bool *found, BlogRowFn fn, void *arg)
{
	const BlogReadDef *def = &read_defs[read];
	ReadColumns *c = &read_columns[read];

	if (!read_columns_registered)
	{
		CacheRegisterRelcacheCallback(read_columns_reset, (Datum) 0);
		read_columns_registered = true;
	}
	if (c->indexid != RelationGetRelid(index))
		find_columns(c, def, rel, index);
	st->index = index;
	st->cols = def->cols;
	st->ncols = def->ncols;
	st->index_only = c->index_only;
	memcpy(st->atts, c->atts, sizeof(st->atts));

	/*
	 * A statement whose snapshot was taken before the commit of the update
	 * that added the posts' copies (ALTER EXTENSION pg_blog UPDATE to 1.3),
	 * and that waited on its lock, sees the new columns with the rows as
	 * they were before the update filled them: it reads them as a schema
	 * before 1.3 does.
	 */
	if (TransactionIdIsNormal(c->added_by)
		&& XidInMVCCSnapshot(c->added_by, GetActiveSnapshot()))
	{
		int			i;

		for (i = def->ncols_1_0; i < def->ncols; i++)
			st->atts[i] = InvalidAttrNumber;
	}
	st->found = found;
	st->fn = fn;
	st->arg = arg;
}

static void
fetch_row(const BlogEntry *entry, void *arg)
{
	FetchState *st = (FetchState *) arg;
	Datum		values[BLOG_MAX_COLS];

	/* a unique index gives one visible row per key */
	if (st->found[entry->key] && st->index->rd_index->indisunique)
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("more than one visible row for one key of index \"blog.%s\"",
						RelationGetRelationName(st->index))));
	st->found[entry->key] = true;
	if (st->index_only)
	{
		Datum		ivalues[INDEX_MAX_KEYS];
		bool		inulls[INDEX_MAX_KEYS];

		index_deform_tuple(entry->itup, entry->itupdesc, ivalues, inulls);
		pick_values(ivalues, inulls, st->atts, st->cols, st->ncols, values);
	}
	else
		slot_values(entry->row, st->atts, st->cols, st->ncols, values);
	st->fn(values, entry->key, st->arg);
}

/*
 * Call fn with the columns of read of each visible row whose key, the int4
 * first column of the read's index, is one of keys[0 .. nkeys) (sorted,
 * distinct), in index order; returns how many keys have a row.  A unique
 * index is checked to give at most one row per key.  The rows are read in
 * place, from the index alone when it holds the columns: only what fn
 * keeps is copied.
 */
int
blog_fetch_by_int4(BlogRead read, const int32 *keys, int nkeys,
				   BlogRowFn fn, void *arg)
{
	Relation	rel = blog_open_table(read_defs[read].table);
	Relation	index = check_int4_index(open_read_index(&read_defs[read], rel), 1);
	bool		one_found = false;
	bool	   *found = nkeys == 1 ? &one_found : palloc0(sizeof(bool) * nkeys);
	FetchState	st;
	int			n = 0;
	int			i;

	fetch_prepare(&st, read, rel, index, found, fn, arg);
	blog_index_lookup(rel, index, keys, nkeys, !st.index_only, fetch_row, &st);
	for (i = 0; i < nkeys; i++)
		n += found[i];
	index_close(index, NoLock);
	table_close(rel, NoLock);
	return n;
}

/*
 * Call fn (with key 0) with the columns of read of each of the first n
 * visible rows in the order of its index walked in direction dir, from the
 * index alone when it holds the columns; returns how many.
 */
int
blog_fetch_first(BlogRead read, ScanDirection dir, int n, BlogRowFn fn,
				 void *arg)
{
	Relation	rel = blog_open_table(read_defs[read].table);
	Relation	index = open_read_index(&read_defs[read], rel);
	bool		found = false;
	FetchState	fst;
	LookupState st;
	IndexScanDesc scan;
	ItemPointer tid;
	BlogEntry	entry;
	int			count = 0;

	fetch_prepare(&fst, read, rel, index, &found, fn, arg);
	lookup_begin(&st, rel, index, !fst.index_only, fetch_row, &fst);
	scan = blog_index_beginscan(rel, index, GetActiveSnapshot(), 0, 0);
	scan->xs_want_itup = true;
	index_rescan(scan, NULL, 0, NULL, 0);
	while (count < n && (tid = index_getnext_tid(scan, dir)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		if (!entry_visible(&st, scan, tid))
			continue;
		entry.key = 0;
		entry.itup = scan->xs_itup;
		entry.itupdesc = scan->xs_itupdesc;
		entry.row = st.want_rows ? st.slot : NULL;
		fetch_row(&entry, &fst);
		count++;
	}
	index_endscan(scan);
	lookup_end(&st);
	index_close(index, NoLock);
	table_close(rel, NoLock);
	return count;
}

/*
 * Call fn (with key 0) with the columns of read of the visible row whose
 * key, in the unique text index of the read, is value; false if there is
 * none.
 */
bool
blog_fetch_by_text(BlogRead read, Datum value, BlogRowFn fn, void *arg)
{
	Relation	rel = blog_open_table(read_defs[read].table);
	Relation	index = open_read_index(&read_defs[read], rel);
	bool		found = false;
	FetchState	st;

	if (index->rd_opfamily[0] != TEXT_BTREE_FAM_OID ||
		index->rd_opcintype[0] != TEXTOID ||
		!index->rd_index->indisunique)
		blog_refuse_layout(index);
	fetch_prepare(&st, read, rel, index, &found, fn, arg);
	index_lookup_text(rel, index, value, !st.index_only, fetch_row, &st);
	index_close(index, NoLock);
	table_close(rel, NoLock);
	return found;
}
