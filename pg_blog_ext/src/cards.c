/*-------------------------------------------------------------------------
 *
 * cards.c
 *	  The tags and comment counts of the post cards of the index and tag
 *	  pages, read straight from the (post_id, ...) indexes: one index probe
 *	  per post and no executor start-up, sort or hash per page.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/relscan.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

static SPIPlanPtr tag_names_plan = NULL;

/*
 * The few distinct tags the cards show; the planner picks a scan of a small
 * tags table or probes of its key, whichever is cheaper.
 */
#define TAG_NAMES_QUERY \
	"SELECT t.id, t.slug, t.name" \
	"  FROM blog.tags t" \
	" WHERE t.id OPERATOR(pg_catalog.=) ANY ($1)"

typedef struct TagLink
{
	int			slot;			/* the post's card */
	int32		tag_id;
} TagLink;

typedef struct TagText
{
	int32		id;
	Datum		slug;
	Datum		name;
} TagText;

static int
int32_cmp(const void *a, const void *b)
{
	int32		x = *(const int32 *) a;
	int32		y = *(const int32 *) b;

	return (x > y) - (x < y);
}

static int
tagtext_cmp(const void *a, const void *b)
{
	int32		x = ((const TagText *) a)->id;
	int32		y = ((const TagText *) b)->id;

	return (x > y) - (x < y);
}

typedef struct LinkList
{
	TagLink    *links;
	int			n;
	int			cap;
} LinkList;

static void
collect_link(IndexScanDesc scan, int slot, void *arg)
{
	LinkList   *list = (LinkList *) arg;
	bool		isnull;
	Datum		tag = index_getattr(scan->xs_itup, 2, scan->xs_itupdesc, &isnull);

	if (isnull)
		return;
	if (list->n == list->cap)
	{
		list->cap *= 2;
		list->links = repalloc(list->links, sizeof(TagLink) * list->cap);
	}
	list->links[list->n].slot = slot;
	list->links[list->n].tag_id = DatumGetInt32(tag);
	list->n++;
}

static void
count_comment(IndexScanDesc scan, int slot, void *arg)
{
	int32	   *counts = (int32 *) arg;

	(void) scan;
	counts[slot]++;
}

/* The slug and name of each distinct tag id of the links. */
static TagText *
fetch_tag_texts(LinkList *list, int *ntexts)
{
	int32	   *ids = palloc(sizeof(int32) * (list->n + 1));
	Datum	   *elems;
	Datum		arg;
	TagText    *texts;
	SPITupleTable *tt;
	int			nids = 0;
	int			i;
	int			ret;

	for (i = 0; i < list->n; i++)
		ids[i] = list->links[i].tag_id;
	qsort(ids, list->n, sizeof(int32), int32_cmp);
	elems = palloc(sizeof(Datum) * (list->n + 1));
	for (i = 0; i < list->n; i++)
		if (i == 0 || ids[i] != ids[i - 1])
			elems[nids++] = Int32GetDatum(ids[i]);

	if (tag_names_plan == NULL)
	{
		Oid			argtypes[1] = {INT4ARRAYOID};

		tag_names_plan = blog_prepare(TAG_NAMES_QUERY, 1, argtypes);
	}
	arg = PointerGetDatum(construct_array(elems, nids, INT4OID,
										  sizeof(int32), true, TYPALIGN_INT));
	ret = SPI_execute_plan(tag_names_plan, &arg, NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "tag query failed: %s", SPI_result_code_string(ret));
	tt = SPI_tuptable;
	texts = palloc(sizeof(TagText) * (SPI_processed + 1));
	for (i = 0; i < (int) SPI_processed; i++)
	{
		bool		isnull;

		texts[i].id = DatumGetInt32(blog_value(tt->vals[i], tt->tupdesc, 1, &isnull));
		texts[i].slug = blog_text_value(tt->vals[i], tt->tupdesc, 2);
		texts[i].name = blog_text_value(tt->vals[i], tt->tupdesc, 3);
	}
	*ntexts = (int) SPI_processed;
	qsort(texts, *ntexts, sizeof(TagText), tagtext_cmp);
	return texts;
}

/*
 * Turn the links, grouped by post in tag-id order (the order of the
 * (post_id, tag_id) index), into each card's two arrays.
 */
static void
build_tag_arrays(BlogCards *cards, LinkList *list)
{
	TagText    *texts;
	int			ntexts;
	Datum	   *slugs = palloc(sizeof(Datum) * (list->n + 1));
	Datum	   *names = palloc(sizeof(Datum) * (list->n + 1));
	int			start = 0;
	int			n = 0;
	int			i;

	if (list->n == 0)
		return;
	texts = fetch_tag_texts(list, &ntexts);
	for (i = 0; i < list->n; i++)
	{
		TagText		key;
		TagText    *hit;

		key.id = list->links[i].tag_id;
		hit = bsearch(&key, texts, ntexts, sizeof(TagText), tagtext_cmp);
		/* a link whose tag this snapshot cannot see is skipped */
		if (hit != NULL)
		{
			slugs[n] = hit->slug;
			names[n] = hit->name;
			n++;
		}
		if (i + 1 == list->n || list->links[i + 1].slot != list->links[i].slot)
		{
			int			slot = list->links[i].slot;

			cards->tag_slugs[slot] = blog_text_array(slugs + start, n - start);
			cards->tag_names[slot] = blog_text_array(names + start, n - start);
			start = n;
		}
	}
}

/*
 * Fill cards for the posts ids[0 .. nposts), in that order: each post's
 * tags from the post_tags primary key and its comment count from the
 * comments index, both read directly, one probe per post.  Must run inside
 * SPI_connect; the results live until SPI_finish.
 */
void
blog_cards_fetch(BlogCards *cards, int32 *ids, int nposts)
{
	Oid			nsp;
	Relation	post_tags;
	Relation	post_tags_key;
	Relation	comments;
	Relation	comments_post;
	IdSlot	   *sorted;
	Datum		empty;
	LinkList	list;
	int			i;

	cards->nposts = nposts;
	cards->ids = ids;
	cards->comment_counts = palloc0(sizeof(int32) * (nposts + 1));
	cards->tag_slugs = palloc(sizeof(Datum) * (nposts + 1));
	cards->tag_names = palloc(sizeof(Datum) * (nposts + 1));
	if (nposts == 0)
		return;

	sorted = palloc(sizeof(IdSlot) * nposts);
	empty = blog_text_array(NULL, 0);
	for (i = 0; i < nposts; i++)
	{
		sorted[i].id = ids[i];
		sorted[i].slot = i;
		cards->tag_slugs[i] = empty;
		cards->tag_names[i] = empty;
	}
	/* probing in key order keeps the index pages hot */
	qsort(sorted, nposts, sizeof(IdSlot), blog_idslot_cmp);

	nsp = get_namespace_oid("blog", false);

	post_tags = table_open(blog_relid(nsp, "post_tags"), AccessShareLock);
	post_tags_key = blog_open_int4_index(nsp, "post_tags_pkey", post_tags, 2);
	list.cap = nposts * 4;
	list.n = 0;
	list.links = palloc(sizeof(TagLink) * list.cap);
	blog_scan_index_only(post_tags, post_tags_key, sorted, nposts, collect_link, &list);
	index_close(post_tags_key, NoLock);
	table_close(post_tags, NoLock);

	comments = table_open(blog_relid(nsp, "comments"), AccessShareLock);
	comments_post = blog_open_int4_index(nsp, "comments_post_idx", comments, 1);
	blog_scan_index_only(comments, comments_post, sorted, nposts, count_comment,
			   cards->comment_counts);
	index_close(comments_post, NoLock);
	table_close(comments, NoLock);

	build_tag_arrays(cards, &list);
}

/*
 * Return the posts as cards, in the order given, each row starting with
 * the npre values of prefix.
 */
void
blog_cards_emit(FunctionCallInfo fcinfo, BlogPost *posts, int nposts,
				Datum *prefix, int npre)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BlogCards	cards;
	int32	   *ids = palloc(sizeof(int32) * (nposts + 1));
	int			i;

	for (i = 0; i < nposts; i++)
		ids[i] = posts[i].id;
	blog_cards_fetch(&cards, ids, nposts);

	for (i = 0; i < nposts; i++)
	{
		Datum		values[BLOG_CARD_MAX_COLS];
		bool		nulls[BLOG_CARD_MAX_COLS] = {0};
		Datum	   *v = values + npre;
		int			j;

		CHECK_FOR_INTERRUPTS();
		for (j = 0; j < npre; j++)
			values[j] = prefix[j];
		v[0] = posts[i].slug;
		v[1] = posts[i].title;
		v[2] = posts[i].author;
		v[3] = TimestampTzGetDatum(posts[i].published_at);
		v[4] = Int32GetDatum(cards.comment_counts[i]);
		v[5] = cards.tag_slugs[i];
		v[6] = cards.tag_names[i];
		v[7] = posts[i].summary;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}
