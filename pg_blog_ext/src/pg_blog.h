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
extern void blog_materialize(FunctionCallInfo fcinfo);
extern Datum blog_text_copy(Datum value);
extern Datum blog_text_array(Datum *elems, int nelems);
extern void blog_cards_fetch(BlogCards *cards, int32 *ids, int nposts);
extern void blog_cards_emit(FunctionCallInfo fcinfo, BlogPost *posts,
							int nposts, Datum *prefix, int npre);

/* posts.c: a card's post, from the columns BLOG_POST_COLS of blog.posts */
#define BLOG_POST_NCOLS 6
extern const char *const blog_post_cols[BLOG_POST_NCOLS];
extern void blog_post_set(BlogPost *post, Datum *values, bool *isnull);
extern void blog_posts_authors(Oid nsp, BlogPost *posts, int n);

/* tags.c: the slug and name of tags, sorted by id */
typedef struct BlogTag
{
	int32		id;
	Datum		slug;
	Datum		name;
} BlogTag;

extern int	blog_tags_fetch(Oid nsp, const int32 *ids, int n, BlogTag *out);
extern BlogTag *blog_tag_find(BlogTag *tags, int ntags, int32 id);

/* scan.c: direct index scans of the blog's tables */
typedef void (*BlogEntryFn) (IndexScanDesc scan, int slot, void *arg);

/*
 * A visible row: the values of the columns asked for, valid only during
 * the call (they may point into a shared buffer).
 */
typedef void (*BlogRowFn) (Datum *values, bool *isnull, void *arg);

#define BLOG_MAX_COLS 8

extern int	blog_idslot_cmp(const void *a, const void *b);
extern Oid	blog_nsp(void);
extern Oid	blog_relid(Oid nsp, const char *name);
extern Relation blog_open_int4_index(Oid nsp, const char *name, Relation heap,
									 int natts);
extern void blog_scan_index_only(Relation heap, Relation index, IdSlot *sorted,
								 int n, BlogEntryFn fn, void *arg);
extern int32 *blog_linked_ids(Oid nsp, const char *index_name, int32 id,
							   int *n);
extern HeapTuple blog_fetch_unique(IndexScanDesc scan, TupleTableSlot *slot,
								   ScanKey key);
extern AttrNumber blog_attnum(Relation rel, const char *name);
extern void blog_attnums(Relation rel, const char *const *names, int n,
						 AttrNumber *out);
extern void blog_slot_values(TupleTableSlot *slot, const AttrNumber *atts,
							 int n, Datum *values, bool *isnull);
extern int	blog_fetch_by_int4(Oid nsp, const char *table, const char *index_name,
							   const int32 *ids, int n, const char *const *cols,
							   int ncols, BlogRowFn fn, void *arg);
extern HeapTuple blog_fetch_by_text(Oid nsp, Relation rel, const char *index_name,
									Datum value);
extern Datum blog_text_attr(HeapTuple tuple, TupleDesc desc, AttrNumber attnum);
extern int32 blog_int4_attr(HeapTuple tuple, TupleDesc desc, AttrNumber attnum);

#endif							/* PG_BLOG_H */
