/*-------------------------------------------------------------------------
 *
 * pg_blog.h
 *	  Declarations shared by the page functions of pg_blog.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_BLOG_H
#define PG_BLOG_H

#include "postgres.h"

#include "access/genam.h"
#include "access/skey.h"
#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "utils/relcache.h"

/* Slugs are 1 to 64 bytes of a-z, 0-9 and '-' (SPEC section 2). */
#define BLOG_SLUG_MAX 64

/*
 * A card is slug, title, author_name, published_at, comment_count,
 * tag_slugs, tag_names, summary; a page may put columns before it.
 */
#define BLOG_CARD_COLS 8
#define BLOG_CARD_MAX_COLS (BLOG_CARD_COLS + 1)

/* A post id and the card or row it belongs to. */
typedef struct IdSlot
{
	int32		id;
	int			slot;
} IdSlot;

/* What a card shows of a post, besides its tags and comment count. */
typedef struct BlogPost
{
	int32		id;
	int32		author_id;
	Datum		slug;
	Datum		title;
	Datum		author;
	Datum		summary;
	TimestampTz published_at;
} BlogPost;

/*
 * The tags and comment counts of a list of posts.  Entry i belongs to
 * ids[i].
 */
typedef struct BlogCards
{
	int			nposts;
	int32	   *ids;
	int32	   *comment_counts;
	Datum	   *tag_slugs;		/* text[] */
	Datum	   *tag_names;		/* text[] */
} BlogCards;

extern bool blog_slug_arg_is_valid(Datum slug);
extern SPIPlanPtr blog_prepare(const char *query, int nargs, Oid *argtypes);
extern void blog_materialize(FunctionCallInfo fcinfo);
extern Datum blog_text_value(HeapTuple tuple, TupleDesc desc, int fnum);
extern Datum blog_value(HeapTuple tuple, TupleDesc desc, int fnum, bool *isnull);
extern Datum blog_text_array(Datum *elems, int nelems);
extern void blog_cards_fetch(BlogCards *cards, int32 *ids, int nposts);
extern void blog_cards_emit(FunctionCallInfo fcinfo, BlogPost *posts,
							int nposts, Datum *prefix, int npre);
extern void blog_posts_fill(Oid nsp, HeapTuple *tuples, int n, TupleDesc desc,
							BlogPost *posts);

/* scan.c: direct index scans of the blog's tables */
typedef void (*BlogEntryFn) (IndexScanDesc scan, int slot, void *arg);

extern int	blog_idslot_cmp(const void *a, const void *b);
extern Oid	blog_relid(Oid nsp, const char *name);
extern Relation blog_open_int4_index(Oid nsp, const char *name, Relation heap,
									 int natts);
extern void blog_scan_index_only(Relation heap, Relation index, IdSlot *sorted,
								 int n, BlogEntryFn fn, void *arg);
extern HeapTuple blog_fetch_unique(IndexScanDesc scan, TupleTableSlot *slot,
								   ScanKey key);
extern AttrNumber blog_attnum(Relation rel, const char *name);
extern int	blog_fetch_by_int4(Oid nsp, const char *table, const char *index_name,
							   int32 *ids, int n, HeapTuple *out, TupleDesc *desc);
extern HeapTuple blog_fetch_by_text(Oid nsp, Relation rel, const char *index_name,
									Datum value);
extern Datum blog_text_attr(HeapTuple tuple, TupleDesc desc, AttrNumber attnum);
extern int32 blog_int4_attr(HeapTuple tuple, TupleDesc desc, AttrNumber attnum);

#endif							/* PG_BLOG_H */
