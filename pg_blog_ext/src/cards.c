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
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

typedef struct TagLink
{
	int			slot;			/* the post's card */
	int32		tag_id;
} TagLink;

static int
int32_cmp(const void *a, const void *b)
{
	int32		x = *(const int32 *) a;
	int32		y = *(const int32 *) b;

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
static BlogTag *
fetch_tag_texts(LinkList *list, int *ntags)
{
	int32	   *ids = palloc(sizeof(int32) * (list->n + 1));
	BlogTag    *tags;
	int			nids = 0;
	int			i;

	for (i = 0; i < list->n; i++)
		ids[i] = list->links[i].tag_id;
	qsort(ids, list->n, sizeof(int32), int32_cmp);
	for (i = 0; i < list->n; i++)
		if (i == 0 || ids[i] != ids[nids - 1])
			ids[nids++] = ids[i];

	tags = palloc(sizeof(BlogTag) * (nids + 1));
	*ntags = blog_tags_fetch(blog_nsp(), ids, nids, tags);
	return tags;
}

/*
 * Turn the links, grouped by post in tag-id order (the order of the
 * (post_id, tag_id) index), into each card's two arrays.
 */
static void
build_tag_arrays(BlogCards *cards, LinkList *list)
{
	BlogTag    *tags;
	int			ntags;
	Datum	   *slugs = palloc(sizeof(Datum) * (list->n + 1));
	Datum	   *names = palloc(sizeof(Datum) * (list->n + 1));
	int			start = 0;
	int			n = 0;
	int			i;

	if (list->n == 0)
		return;
	tags = fetch_tag_texts(list, &ntags);
	for (i = 0; i < list->n; i++)
	{
		BlogTag    *hit = blog_tag_find(tags, ntags, list->links[i].tag_id);

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
 * comments index, both read directly, one probe per post.
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
	/*
	 * Probing in key order keeps the index pages hot.  The cards are newest
	 * first, and newer posts mostly have higher ids: reversed, the ids are
	 * usually sorted already, which qsort() checks in one pass.
	 */
	for (i = 0; i < nposts; i++)
	{
		sorted[nposts - 1 - i].id = ids[i];
		sorted[nposts - 1 - i].slot = i;
		cards->tag_slugs[i] = empty;
		cards->tag_names[i] = empty;
	}
	qsort(sorted, nposts, sizeof(IdSlot), blog_idslot_cmp);

	nsp = blog_nsp();

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
