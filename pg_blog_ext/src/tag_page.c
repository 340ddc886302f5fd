/* SPDX-License-Identifier: Apache-2.0 */
/*-------------------------------------------------------------------------
 *
 * tag_page.c
 *	  blog.tag_page(slug): a tag and the cards of its posts, newest first.
 *
 *	  The tag by its slug, its post ids from (tag_id, post_id), the posts
 *	  by key in one walk of their primary key, then the cards (cards.c)
 *	  and a sort of at most the tag's posts.  No executor start-up, join or
 *	  sort node per call.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "funcapi.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(blog_tag_page);

/* Newest first; ties by higher id first (docs/CONTRACT.md section 5). */
static inline int
page_order_cmp(const BlogPost *x, const BlogPost *y)
{
	int			c = pg_cmp_s64(y->published_at, x->published_at);

	return c != 0 ? c : pg_cmp_s32(y->id, x->id);
}

/* sort_posts(): PostgreSQL's sort with that order compiled in */
#define ST_SORT sort_posts
#define ST_ELEMENT_TYPE BlogPost
#define ST_COMPARE(a, b) page_order_cmp(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

typedef struct Tag
{
	int32		id;
	Datum		name;
	bool		found;
} Tag;

static void
keep_tag(Datum *values, int key, void *arg)
{
	Tag		   *tag = (Tag *) arg;

	(void) key;
	tag->id = DatumGetInt32(values[0]);
	tag->name = blog_text_copy(values[1]);
	tag->found = true;
}

static void
keep_post(Datum *values, int key, void *arg)
{
	blog_post_set(&((BlogPost *) arg)[key], values);
}

/*
 * The visible posts among ids[0 .. n) (sorted), newest first, with their
 * authors' names, into out (room for n); returns how many there are.
 */
static int
fetch_posts(const int32 *ids, int n, BlogPost *out)
{
	BlogPost   *by_key = palloc0(sizeof(BlogPost) * n);
	int			found = 0;
	int			i;

	blog_fetch_by_int4(BLOG_READ_CARDS_BY_ID, ids, n, keep_post, by_key);
	/* newest first is mostly highest id first: the sort finds it sorted */
	for (i = n - 1; i >= 0; i--)
		if (by_key[i].slug != (Datum) 0)
			out[found++] = by_key[i];
	blog_posts_copies(out, found);
	blog_posts_authors(out, found);
	sort_posts(out, found);
	return found;
}

static void
tag_page(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Tag			tag = {0};
	List	   *links;
	ListCell   *lc;
	int32	   *ids;
	int			nids = 0;
	BlogPost   *posts;
	int			nposts;

	if (!blog_page_by_slug(fcinfo, BLOG_READ_TAG_BY_SLUG, keep_tag, &tag))
		return;

	/* the ids of the posts carrying the tag, in id order */
	links = blog_linked_ids(BLOG_REL_post_tags_tag_idx, tag.id);
	ids = palloc(sizeof(int32) * list_length(links));
	foreach(lc, links)
		ids[nids++] = lfirst_int(lc);
	posts = palloc(sizeof(BlogPost) * nids);
	nposts = fetch_posts(ids, nids, posts);

	if (nposts == 0)
	{
		/* a tag without posts still has a page: its name, no cards */
		Datum		values[BLOG_CARD_MAX_PREFIX + BLOG_CARD_COLS] = {0};
		bool		nulls[BLOG_CARD_MAX_PREFIX + BLOG_CARD_COLS];

		memset(nulls, true, sizeof(nulls));
		values[0] = tag.name;
		nulls[0] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	else
		blog_cards_emit(fcinfo, posts, nposts, &tag.name, 1);
}

Datum
blog_tag_page(PG_FUNCTION_ARGS)
{
	return blog_page(fcinfo, tag_page);
}
