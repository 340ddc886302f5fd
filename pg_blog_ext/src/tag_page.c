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

/* Newest first; ties by higher id first (the contract's tag page). */
static int
post_order_cmp(const void *a, const void *b)
{
	const BlogPost *x = (const BlogPost *) a;
	const BlogPost *y = (const BlogPost *) b;

	if (x->published_at != y->published_at)
		return x->published_at > y->published_at ? -1 : 1;
	return (x->id < y->id) - (x->id > y->id);
}

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
fetch_posts(Oid nsp, const int32 *ids, int n, BlogPost *out)
{
	BlogPost   *by_key = palloc0(sizeof(BlogPost) * (n + 1));
	int			found = 0;
	int			i;

	blog_fetch_by_int4(nsp, "posts", "posts_card_idx", ids, n, blog_post_cols,
					   BLOG_POST_NCOLS, keep_post, by_key);
	/* newest first is mostly highest id first: qsort() finds it sorted */
	for (i = n - 1; i >= 0; i--)
		if (by_key[i].slug != (Datum) 0)
			out[found++] = by_key[i];
	blog_posts_authors(nsp, out, found);
	qsort(out, found, sizeof(BlogPost), post_order_cmp);
	return found;
}

Datum
blog_tag_page(PG_FUNCTION_ARGS)
{
	static const char *const tag_cols[] = {"id", "name"};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		slug = PG_GETARG_DATUM(0);
	Tag			tag = {0};
	List	   *links;
	ListCell   *lc;
	int32	   *ids;
	int			nids = 0;
	BlogPost   *posts;
	int			nposts;
	Oid			nsp;

	blog_materialize(fcinfo);
	if (!blog_slug_arg_is_valid(slug))
		return (Datum) 0;

	nsp = blog_nsp();
	if (!blog_fetch_by_text(nsp, "tags", "tags_slug_key", slug, tag_cols,
							lengthof(tag_cols), keep_tag, &tag))
		return (Datum) 0;

	/* the ids of the posts carrying the tag, in id order */
	links = blog_linked_ids(nsp, "post_tags_tag_idx", tag.id);
	ids = palloc(sizeof(int32) * (list_length(links) + 1));
	foreach(lc, links)
		ids[nids++] = lfirst_int(lc);
	posts = palloc(sizeof(BlogPost) * (nids + 1));
	nposts = fetch_posts(nsp, ids, nids, posts);

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

	return (Datum) 0;
}
