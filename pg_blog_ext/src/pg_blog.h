/* SPDX-License-Identifier: Apache-2.0 */
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

#include "pg_blog_compat.h"

#include "access/genam.h"
#include "access/itup.h"
#include "datatype/timestamp.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "nodes/pg_list.h"
#include "utils/relcache.h"

/* A slug is 1 to 64 bytes of a-z, 0-9 and '-': docs/CONTRACT.md section 2 */
#define BLOG_SLUG_MAX 64

/*
 * A card is slug, title, author_name, published_at, comment_count,
 * tag_slugs, tag_names, summary; the tag page puts tag_name before it.
 */
#define BLOG_CARD_COLS 8
#define BLOG_CARD_MAX_PREFIX 1

/* What a card shows of a post. */
typedef struct BlogPost
{
	int32		id;
	int32		author_id;
	Datum		slug;
	Datum		title;
	Datum		author;
	Datum		summary;
	TimestampTz published_at;
	int32		comment_count;
	Datum		tag_ids;		/* int4[], detoasted */
} BlogPost;

/* The tag arrays of a list of posts. */
typedef struct BlogTagArrays
{
	Datum	   *slugs;			/* text[] per post */
	Datum	   *names;			/* text[] per post */
} BlogTagArrays;

/*
 * The relations the pages read, all in the schema blog, each named once
 * here as its extension script names it.  They are opened by the number
 * BLOG_REL_<name> (scan.c), never through the search_path.  The primary
 * keys are read only in a schema of version 1.0, which lacks the covering
 * indexes of the same keys.
 */
#define BLOG_RELATIONS(X) \
	X(authors) X(tags) X(posts) X(post_tags) X(comments) \
	X(authors_name_idx) X(tags_slug_key) X(tags_text_idx) \
	X(posts_slug_key) X(posts_card_idx) X(posts_published_idx) \
	X(post_tags_tag_idx) X(comments_post_idx) \
	X(authors_pkey) X(tags_pkey) X(posts_pkey) X(post_tags_pkey)

#define BLOG_REL_NUMBER(name) BLOG_REL_##name,
typedef enum BlogRel
{
	BLOG_RELATIONS(BLOG_REL_NUMBER)
	BLOG_NUM_RELS
} BlogRel;
#undef BLOG_REL_NUMBER

/*
 * The reads of rows by key that the pages make, each with its table, index
 * and columns in scan.c's table of reads, which also says what a schema
 * older than the library has instead.
 */
typedef enum BlogRead
{
	BLOG_READ_CARDS_BY_ID,		/* posts by id: a card's columns */
	BLOG_READ_CARDS_LATEST,		/* posts, newest first: a card's columns */
	BLOG_READ_POST_BY_SLUG,		/* a post by slug: the detail page's columns */
	BLOG_READ_AUTHOR_NAMES,		/* authors by id: name */
	BLOG_READ_TAG_TEXTS,		/* tags by id: slug, name */
	BLOG_READ_TAG_BY_SLUG,		/* a tag by slug: id, name */
	BLOG_READ_COMMENTS,			/* a post's comments, oldest first */
	BLOG_NUM_READS
} BlogRead;

/* The columns of blog.posts that a card's read returns (scan.c's read_defs) */
typedef enum BlogPostCol
{
	BLOG_POST_ID,
	BLOG_POST_AUTHOR_ID,
	BLOG_POST_SLUG,
	BLOG_POST_TITLE,
	BLOG_POST_SUMMARY,
	BLOG_POST_PUBLISHED,
	BLOG_POST_COMMENT_COUNT,	/* since 1.3 */
	BLOG_POST_TAG_IDS			/* since 1.3 */
} BlogPostCol;

/* The columns of blog.posts that the detail page's read returns (read_defs) */
typedef enum BlogDetailCol
{
	BLOG_DETAIL_ID,
	BLOG_DETAIL_AUTHOR_ID,
	BLOG_DETAIL_TITLE,
	BLOG_DETAIL_BODY,
	BLOG_DETAIL_PUBLISHED,
	BLOG_DETAIL_TAG_IDS,		/* since 1.3 */
	BLOG_DETAIL_NCOLS
} BlogDetailCol;

/*
 * A visible row of a read (BlogRead): the values of its columns, NOT NULL
 * ones, pointing into a pinned heap buffer or the scan's copy of the index
 * entry (copy what is kept), and the number of its key.  A column that a
 * schema older than the library lacks is (Datum) 0.
 */
typedef void (*BlogRowFn) (Datum *values, int key, void *arg);

/* common.c */
extern int	blog_int32_cmp(const void *a, const void *b);
extern int	blog_sort_unique(int32 *ids, int n);
extern int	blog_key_index(const int32 *keys, int nkeys, int32 key);
typedef void (*BlogPageFn) (FunctionCallInfo fcinfo);
extern Datum blog_page(FunctionCallInfo fcinfo, BlogPageFn build);
extern Datum blog_text_array(Datum *elems, int nelems);
extern bool blog_page_by_slug(FunctionCallInfo fcinfo, BlogRead read,
							  BlogRowFn fn, void *arg);

/*
 * A copy of a text value that may point into a shared buffer, detoasted
 * (with a 4-byte header, which the arrays' elements have anyway).
 */
static inline Datum
blog_text_copy(Datum value)
{
	return PointerGetDatum(PG_DETOAST_DATUM_COPY(value));
}

/* scan.c: the blog's relations, and reads of them by key */
extern void blog_reads_begin(void);
extern void blog_reads_end(void);
extern Relation blog_open_table(BlogRel table);
extern Relation blog_open_index(BlogRel index, Relation heap);
extern Relation blog_open_int4_index(BlogRel index, Relation heap, int natts);
pg_noreturn extern void blog_refuse_layout(Relation index);
extern AttrNumber blog_attnum(Relation rel, const char *name);

/*
 * One visible entry of an index whose first column is an int4 key: the
 * number of that key in the caller's keys, the index tuple and, when asked
 * for, the visible heap row.  Valid only during the callback (the row is
 * in a pinned, unlocked shared buffer; the index tuple is the scan's copy).
 */
typedef struct BlogEntry
{
	int			key;
	IndexTuple	itup;
	TupleDesc	itupdesc;
	TupleTableSlot *row;
} BlogEntry;

typedef void (*BlogEntryFn) (const BlogEntry *entry, void *arg);

extern void blog_index_lookup(Relation heap, Relation index,
							  const int32 *keys, int nkeys, bool want_rows,
							  BlogEntryFn fn, void *arg);
extern int32 blog_entry_int4(const BlogEntry *entry, AttrNumber attnum);
extern List *blog_linked_ids(BlogRel index, int32 id);

/* The most columns one read returns (a card's post: 8) */
#define BLOG_MAX_COLS 8

extern int	blog_fetch_by_int4(BlogRead read, const int32 *keys, int nkeys,
							   BlogRowFn fn, void *arg);
extern bool blog_fetch_by_text(BlogRead read, Datum value, BlogRowFn fn,
							   void *arg);
extern int	blog_fetch_first(BlogRead read, ScanDirection dir, int n,
							 BlogRowFn fn, void *arg);

/* posts.c: a card's post, from the columns of BLOG_READ_CARDS_* */
extern void blog_post_set(BlogPost *post, const Datum *values);
extern void blog_posts_authors(BlogPost *posts, int n);
extern void blog_posts_copies(BlogPost *posts, int n);

/* tags.c: the tag arrays of posts, from their tag_ids */
extern Datum blog_int4_array_copy(Datum value);
extern void blog_tag_arrays(const Datum *tag_ids, int nposts,
							BlogTagArrays *out);

/* cards.c */
extern void blog_cards_emit(FunctionCallInfo fcinfo, BlogPost *posts,
							int nposts, Datum *prefix, int npre);

#endif							/* PG_BLOG_H */
