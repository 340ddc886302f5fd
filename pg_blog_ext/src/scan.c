/*-------------------------------------------------------------------------
 *
 * scan.c
 *	  The blog's relations, and reads of their rows by key straight from
 *	  their B-trees, for the reads where the executor's start-up, sorts and
 *	  hashes, or one index descent per key, would cost more than the reads.
 *
 *	  Relations are found by name in the namespace "blog", never through
 *	  the search_path, and locked as a query reading them would lock them.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
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
 * name forgets them all, so a lookup after DDL (DROP and CREATE EXTENSION)
 * sees what get_relname_relid() would see.  Only names are kept, never
 * rows.
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
blog_relid(BlogRel rel)
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
	if (!OidIsValid(relid_cache[rel]))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("relation \"blog.%s\" does not exist", rel_names[rel]),
				 errdetail("pg_blog's functions read the relations its extension script creates."),
				 errhint("If the extension is older than its library, ALTER EXTENSION pg_blog UPDATE adds what is missing and keeps every row.")));
	return relid_cache[rel];
}

Relation
blog_open_table(BlogRel table)
{
	return table_open(blog_relid(table), AccessShareLock);
}

void
blog_refuse_layout(Relation index)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("index \"blog.%s\" does not have the layout pg_blog needs",
					RelationGetRelationName(index))));
}

/* A B-tree of heap; anything else is refused rather than misread. */
Relation
blog_open_index(BlogRel index, Relation heap)
{
	Relation	rel = index_open(blog_relid(index), AccessShareLock);

	if (rel->rd_index->indrelid != RelationGetRelid(heap) ||
		rel->rd_rel->relam != BTREE_AM_OID)
		blog_refuse_layout(rel);
	return rel;
}

/*
 * A B-tree of heap whose first natts key columns are int4, the first in
 * the default ascending order with nulls last, as blog_index_lookup()
 * reads it.
 */
Relation
blog_open_int4_index(BlogRel index, Relation heap, int natts)
{
	Relation	rel = blog_open_index(index, heap);
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
 * attribute k is all[k - 1] (null if isnull[k - 1]).
 */
static void
pick_values(const Datum *all, const bool *isnull, const AttrNumber *atts,
			const char *const *names, int n, Datum *values)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		if (isnull[atts[i] - 1])
			unexpected_null(names[i]);
		values[i] = all[atts[i] - 1];
	}
}

/*
 * The values of the columns atts[0 .. n) (named names) of the row in slot,
 * deformed once.
 */
void
blog_slot_values(TupleTableSlot *slot, const AttrNumber *atts,
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
 * blog_index_lookup(): the entries of many keys, read leaf page by leaf
 * page.
 *
 * An index scan descends the B-tree once per key (btrescan, key
 * preprocessing, a binary search with an fmgr call per comparison on every
 * level, a pin and a lock per level), which is most of what a card page
 * costs: 200 descents for the 100 cards of a tag.  The keys of a page are
 * sorted, so this walks the leaf level instead: it descends once, binary
 * searches each following key on the same leaf page while the key is
 * within the page's high key, steps to the right sibling when the next key
 * is beyond it, and descends again only when the key is beyond that one
 * too.  int4 keys are compared as int32 in C, which is what int4's default
 * B-tree operator class compares (blog_open_int4_index() refuses any
 * other); a key of another type (a slug) by _bt_compare(), the index's own
 * operator class and collation.
 *
 * The concurrency rules are nbtree's own (Lehman and Yao, as PostgreSQL's
 * nbtree README states them for its scans):
 * a leaf page is read under a share lock, and its right link is taken
 * before the lock is released; a page split moves entries only to the
 * right, and an entry visible to the snapshot was in the index before the
 * snapshot was taken, so every one is found.  Half-dead and deleted pages
 * are stepped over.  Visibility is an index-only scan's: the visibility
 * map for pages all-visible (with a predicate lock on the heap page), the
 * heap otherwise, or always when the caller wants the row.  The heap is
 * read while the leaf page is share-locked, as nbtree's own deletion of
 * index entries reads it under an exclusive one.  A page deleted after its
 * right link was read is not recycled while this backend's snapshot holds
 * back the xmin horizon.  Interrupts are checked between leaf pages, where
 * no buffer lock holds them off.
 */
typedef struct LookupState
{
	Relation	heap;
	Relation	index;
	TupleDesc	itupdesc;
	Snapshot	snapshot;
	bool		want_rows;
	IndexFetchTableData *fetch;
	TupleTableSlot *slot;
	Buffer		vmbuf;
	BlockNumber vm_block;		/* the last heap page found all-visible */
	BlogEntryFn fn;
	void	   *arg;
	/* the keys: int4 ones compared in C, or one compared by the opclass */
	const int32 *int4_keys;
	BTScanInsertData inskey;
	/* the current leaf page, share-locked */
	Buffer		buf;
	Page		page;
	BTPageOpaque opaque;
	OffsetNumber off;
	OffsetNumber maxoff;
} LookupState;

/*
 * The key against the entry at off of the current page: < 0, 0 or > 0 as
 * the key sorts before, equal to or after it.  An int4 key (key) is
 * compared as btint4cmp() would (nulls sort last); a key of another type
 * (the scan key's argument) by _bt_compare(), which for a high key whose
 * attributes all equal the key answers > 0, as the B-tree descent does.
 */
static pg_attribute_always_inline int
key_cmp(LookupState *st, bool int4, int32 key, OffsetNumber off)
{
	IndexTuple	itup = (IndexTuple) PageGetItem(st->page, PageGetItemId(st->page, off));
	bool		isnull;
	int32		k;

	if (!int4)
		return _bt_compare(st->index, &st->inskey, st->page, off);
	/* without nulls, an int4 first column opens the data: index_getattr()'s fast path */
	if (likely(!IndexTupleHasNulls(itup)))
		k = *(const int32 *) ((const char *) itup + IndexInfoFindDataOffset(itup->t_info));
	else
	{
		k = DatumGetInt32(index_getattr(itup, 1, st->itupdesc, &isnull));
		if (isnull)
			return -1;
	}
	return pg_cmp_s32(key, k);
}

/* The comparison of key i with the current page's high key; < 0 at the end. */
static pg_attribute_always_inline int
key_cmp_high(LookupState *st, bool int4, int32 key)
{
	return P_RIGHTMOST(st->opaque) ? -1 : key_cmp(st, int4, key, P_HIKEY);
}

static void
page_loaded(LookupState *st)
{
	st->page = BufferGetPage(st->buf);
	st->opaque = BTPageGetOpaque(st->page);
	st->off = P_FIRSTDATAKEY(st->opaque);
	st->maxoff = PageGetMaxOffsetNumber(st->page);
	PredicateLockPage(st->index, BufferGetBlockNumber(st->buf), st->snapshot);
}

static void
descend(LookupState *st, int i)
{
	BTStack		stack;

	CHECK_FOR_INTERRUPTS();
	if (st->int4_keys != NULL)
		st->inskey.scankeys[0].sk_argument = Int32GetDatum(st->int4_keys[i]);
	stack = _bt_search(st->index, &st->inskey, &st->buf, BT_READ, st->snapshot);
	_bt_freestack(stack);
	/* an index without a root has no entries */
	if (BufferIsValid(st->buf))
		page_loaded(st);
}

/* Step to the right sibling; false at the end of the leaf level. */
static bool
step_right(LookupState *st)
{
	BlockNumber next = st->opaque->btpo_next;

	for (;;)
	{
		_bt_relbuf(st->index, st->buf);
		st->buf = InvalidBuffer;
		if (next == P_NONE)
			return false;
		CHECK_FOR_INTERRUPTS();
		st->buf = _bt_getbuf(st->index, next, BT_READ);
		st->page = BufferGetPage(st->buf);
		TestForOldSnapshot(st->snapshot, st->index, st->page);
		st->opaque = BTPageGetOpaque(st->page);
		if (!P_IGNORE(st->opaque))
			break;
		next = st->opaque->btpo_next;
	}
	page_loaded(st);
	return true;
}

/* The first offset from st->off on whose entry key i does not sort after. */
static pg_attribute_always_inline OffsetNumber
lower_bound(LookupState *st, bool int4, int32 key)
{
	OffsetNumber low = st->off;
	OffsetNumber high = st->maxoff + 1;

	while (low < high)
	{
		OffsetNumber mid = low + (high - low) / 2;

		if (key_cmp(st, int4, key, mid) > 0)
			low = mid + 1;
		else
			high = mid;
	}
	return low;
}

/*
 * Is the row of the heap TID visible?  tid points into the locked index
 * page, which must not be written: the heap fetch sets its TID argument to
 * the version it finds along a HOT chain, so it is given a copy.
 */
static bool
tid_visible(LookupState *st, const ItemPointerData *tid)
{
	BlockNumber block = ItemPointerGetBlockNumber(tid);
	ItemPointerData fetch_tid = *tid;
	bool		call_again = false;

	if (!st->want_rows)
	{
		if (block == st->vm_block)
			return true;
		if (VM_ALL_VISIBLE(st->heap, block, &st->vmbuf))
		{
			PredicateLockPage(st->heap, block, st->snapshot);
			st->vm_block = block;
			return true;
		}
	}
	if (st->fetch == NULL)
	{
		st->fetch = table_index_fetch_begin(st->heap);
		st->slot = table_slot_create(st->heap, NULL);
	}
	return table_index_fetch_tuple(st->fetch, &fetch_tid, st->snapshot,
								   st->slot, &call_again, NULL);
}

/* inlined: it runs once per index entry, the walk's innermost step */
static pg_attribute_always_inline void
emit_tuple(LookupState *st, IndexTuple itup, int key)
{
	BlogEntry	entry;
	int			ntids = BTreeTupleIsPosting(itup) ? BTreeTupleGetNPosting(itup) : 1;
	int			i;

	entry.key = key;
	entry.itup = itup;
	entry.itupdesc = st->itupdesc;
	for (i = 0; i < ntids; i++)
	{
		ItemPointer tid = BTreeTupleIsPosting(itup) ?
			BTreeTupleGetPostingN(itup, i) : &itup->t_tid;

		if (!tid_visible(st, tid))
			continue;
		entry.row = st->want_rows ? st->slot : NULL;
		st->fn(&entry, st->arg);
		if (st->want_rows)
			ExecClearTuple(st->slot);
	}
}

static void
lookup_begin(LookupState *st, Relation heap, Relation index, bool want_rows,
			 BlogEntryFn fn, void *arg)
{
	memset(st, 0, offsetof(LookupState, inskey));
	st->heap = heap;
	st->index = index;
	st->itupdesc = RelationGetDescr(index);
	st->snapshot = GetActiveSnapshot();
	st->want_rows = want_rows;
	st->vmbuf = InvalidBuffer;
	st->vm_block = InvalidBlockNumber;
	st->fn = fn;
	st->arg = arg;
	st->buf = InvalidBuffer;

	/*
	 * An insertion scan key on the first column, as _bt_first() makes one
	 * for an equality search: built here, for the first column only,
	 * rather than by _bt_mkscankey() for all of them.
	 */
	_bt_metaversion(index, &st->inskey.heapkeyspace, &st->inskey.allequalimage);
	st->inskey.anynullkeys = false;
	st->inskey.nextkey = false;
	st->inskey.pivotsearch = false;
	st->inskey.scantid = NULL;
	st->inskey.keysz = 1;
	ScanKeyEntryInitializeWithInfo(&st->inskey.scankeys[0], 0, 1,
								   InvalidStrategy, InvalidOid,
								   index->rd_indcollation[0],
								   index_getprocinfo(index, 1, BTORDER_PROC),
								   (Datum) 0);
}

/*
 * The entries of keys 0 .. nkeys, with the B-tree walk described above;
 * inlined with int4 constant, so that the int4 comparisons are compiled
 * in place.
 */
static pg_attribute_always_inline void
lookup_run(LookupState *st, bool int4, int nkeys)
{
	bool		stepped = false;
	int			i = 0;

	descend(st, 0);
	while (i < nkeys && BufferIsValid(st->buf))
	{
		int32		key = int4 ? st->int4_keys[i] : 0;
		int			high = key_cmp_high(st, int4, key);

		if (high > 0)
		{
			/* the next leaf page usually holds it; else descend again */
			if (!stepped)
			{
				stepped = true;
				if (!step_right(st))
					break;
			}
			else
			{
				_bt_relbuf(st->index, st->buf);
				st->buf = InvalidBuffer;
				stepped = false;
				descend(st, i);
			}
			continue;
		}
		stepped = false;

		/*
		 * The entries of key on this page.  No CHECK_FOR_INTERRUPTS() in this
		 * loop: the page's content lock holds interrupts off until it is
		 * released, at the step to the next page or the next descent, which
		 * check (a page holds at most MaxTIDsPerBTreePage entries).
		 */
		for (st->off = lower_bound(st, int4, key); st->off <= st->maxoff; st->off++)
		{
			if (key_cmp(st, int4, key, st->off) != 0)
				break;
			emit_tuple(st, (IndexTuple) PageGetItem(st->page,
													PageGetItemId(st->page, st->off)),
					   i);
		}
		/* the page ended inside the key's entries: they go on to the right */
		if (st->off > st->maxoff && high == 0)
		{
			if (!step_right(st))
				break;
			continue;
		}
		i++;
	}

	if (BufferIsValid(st->buf))
		_bt_relbuf(st->index, st->buf);
	if (BufferIsValid(st->vmbuf))
		ReleaseBuffer(st->vmbuf);
	if (st->fetch != NULL)
	{
		ExecDropSingleTupleTableSlot(st->slot);
		table_index_fetch_end(st->fetch);
	}
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
	st.int4_keys = keys;
	lookup_run(&st, true, nkeys);
}

/*
 * The same for one key of the type of the index's first column (a B-tree
 * of heap), compared by the index's operator class and collation, as a
 * query would compare it.
 */
static void
index_lookup_datum(Relation heap, Relation index, Datum key, bool want_rows,
				   BlogEntryFn fn, void *arg)
{
	LookupState st;

	lookup_begin(&st, heap, index, want_rows, fn, arg);
	st.inskey.scankeys[0].sk_argument = key;
	lookup_run(&st, false, 1);
}

/* A NOT NULL int4 column of an entry's index tuple. */
int32
blog_entry_int4(const BlogEntry *entry, AttrNumber attnum)
{
	bool		isnull;
	Datum		d = index_getattr(entry->itup, attnum, entry->itupdesc, &isnull);

	if (isnull)
		unexpected_null(NameStr(TupleDescAttr(entry->itupdesc, attnum - 1)->attname));
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

typedef struct FetchState
{
	Relation	index;
	const char *const *cols;
	int			ncols;
	/* the columns' attribute numbers in the index, if it covers them all */
	bool		index_only;
	AttrNumber	atts[BLOG_MAX_COLS];
	bool	   *found;
	BlogRowFn	fn;
	void	   *arg;
} FetchState;

/*
 * Where fetch_row() finds the columns of a read, kept per backend like the
 * relation OIDs (a name lookup per column per call costs more than the
 * read of a tag): keyed by the caller's constant column list and the
 * index, and forgotten on any relation cache invalidation, which any DDL on
 * the table or the index sends.
 */
typedef struct ColumnCacheEntry
{
	const char *const *cols;
	Oid			indexid;
	bool		index_only;
	AttrNumber	atts[BLOG_MAX_COLS];
} ColumnCacheEntry;

/*
 * The pages make six distinct reads (a post and a tag by slug; authors,
 * tags, comments and card posts by id); a read beyond the cache's size
 * still works, looking its columns up on every call.
 */
#define COLUMN_CACHE_SIZE 8

static ColumnCacheEntry column_cache[COLUMN_CACHE_SIZE];
static int	column_cache_n = 0;
static bool column_cache_registered = false;

static void
column_cache_reset(Datum arg, Oid relid)
{
	(void) arg;
	(void) relid;
	column_cache_n = 0;
}

/*
 * The columns cols of rel: in index when it holds them all (key or INCLUDE
 * columns), which makes the read index-only, else in the heap row.
 */
static void
find_columns(ColumnCacheEntry *e, Relation rel, Relation index,
			 const char *const *cols, int ncols)
{
	AttrNumber	in_index[BLOG_MAX_COLS];
	int			i;

	e->cols = cols;
	e->indexid = RelationGetRelid(index);
	blog_attnums(rel, cols, ncols, e->atts);
	e->index_only = true;
	for (i = 0; i < ncols && e->index_only; i++)
	{
		int			j = 0;

		while (j < index->rd_index->indnatts &&
			   index->rd_index->indkey.values[j] != e->atts[i])
			j++;
		e->index_only = j < index->rd_index->indnatts;
		in_index[i] = j + 1;
	}
	if (e->index_only)
		memcpy(e->atts, in_index, sizeof(AttrNumber) * ncols);
}

static void
fetch_prepare(FetchState *st, Relation rel, Relation index,
			  const char *const *cols, int ncols, bool *found,
			  BlogRowFn fn, void *arg)
{
	ColumnCacheEntry *e = NULL;
	ColumnCacheEntry scratch;
	int			i;

	Assert(ncols <= BLOG_MAX_COLS);
	if (!column_cache_registered)
	{
		CacheRegisterRelcacheCallback(column_cache_reset, (Datum) 0);
		column_cache_registered = true;
	}
	for (i = 0; i < column_cache_n && e == NULL; i++)
		if (column_cache[i].cols == cols &&
			column_cache[i].indexid == RelationGetRelid(index))
			e = &column_cache[i];
	if (e == NULL)
	{
		e = column_cache_n < COLUMN_CACHE_SIZE ?
			&column_cache[column_cache_n] : &scratch;
		find_columns(e, rel, index, cols, ncols);
		if (e != &scratch)
			column_cache_n++;
	}
	st->index = index;
	st->cols = cols;
	st->ncols = ncols;
	st->index_only = e->index_only;
	memcpy(st->atts, e->atts, sizeof(AttrNumber) * ncols);
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
		blog_slot_values(entry->row, st->atts, st->cols, st->ncols, values);
	st->fn(values, entry->key, st->arg);
}

/*
 * Call fn with the columns cols of each visible row of table whose key,
 * the int4 first column of the index index_rel, is one of keys[0 ..
 * nkeys) (sorted, distinct), in index order; returns how many keys have a
 * row.  A unique index is checked to give at most one row per key.  The
 * rows are read in place, from the index alone when it holds the columns:
 * only what fn keeps is copied.
 */
int
blog_fetch_by_int4(BlogRel table, BlogRel index_rel, const int32 *keys,
				   int nkeys, const char *const *cols, int ncols,
				   BlogRowFn fn, void *arg)
{
	Relation	rel = blog_open_table(table);
	Relation	index = blog_open_int4_index(index_rel, rel, 1);
	bool		one_found;
	bool	   *found = nkeys == 1 ? &one_found : palloc(sizeof(bool) * nkeys);
	FetchState	st;
	int			n = 0;
	int			i;

	memset(found, 0, sizeof(bool) * nkeys);
	fetch_prepare(&st, rel, index, cols, ncols, found, fn, arg);
	blog_index_lookup(rel, index, keys, nkeys, !st.index_only, fetch_row, &st);
	for (i = 0; i < nkeys; i++)
		n += found[i];
	index_close(index, NoLock);
	table_close(rel, NoLock);
	return n;
}

/*
 * Call fn (with key 0) with the columns cols of the visible row of table
 * whose unique text index index_rel holds value; false if there is none.
 */
bool
blog_fetch_by_text(BlogRel table, BlogRel index_rel, Datum value,
				   const char *const *cols, int ncols, BlogRowFn fn, void *arg)
{
	Relation	rel = blog_open_table(table);
	Relation	index = blog_open_index(index_rel, rel);
	bool		found = false;
	FetchState	st;

	if (TupleDescAttr(RelationGetDescr(index), 0)->atttypid != TEXTOID ||
		!index->rd_index->indisunique)
		blog_refuse_layout(index);
	fetch_prepare(&st, rel, index, cols, ncols, &found, fn, arg);
	index_lookup_datum(rel, index, value, !st.index_only, fetch_row, &st);
	index_close(index, NoLock);
	table_close(rel, NoLock);
	return found;
}
