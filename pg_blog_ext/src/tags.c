/*-------------------------------------------------------------------------
 *
 * tags.c
 *	  The slugs and names of a set of tags, for the tag arrays of the
 *	  detail page and the cards.
 *
 *	  Read by blog_fetch_by_int4(), which reads a small table whole rather
 *	  than probing its key once per tag.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

static const char *const tag_cols[] = {"id", "slug", "name"};

typedef struct TagList
{
	BlogTag    *tags;
	int			n;
	int			nids;
} TagList;

static int
tag_cmp(const void *a, const void *b)
{
	int32		x = ((const BlogTag *) a)->id;
	int32		y = ((const BlogTag *) b)->id;

	return (x > y) - (x < y);
}

/* Keep a tag's row. */
static void
keep_tag(Datum *values, bool *isnull, void *arg)
{
	TagList    *list = (TagList *) arg;
	BlogTag    *tag;
	int			i;

	for (i = 0; i < (int) lengthof(tag_cols); i++)
		if (isnull[i])
			elog(ERROR, "unexpected null in column %s", tag_cols[i]);
	/* a unique id appears once; more rows than ids means a broken table */
	if (list->n == list->nids)
		elog(ERROR, "duplicate tag id %d", DatumGetInt32(values[0]));
	tag = &list->tags[list->n++];
	tag->id = DatumGetInt32(values[0]);
	tag->slug = blog_text_copy(values[1]);
	tag->name = blog_text_copy(values[2]);
}

/*
 * The visible tags among ids[0 .. n) (sorted and distinct), sorted by id,
 * into out (room for n); returns how many there are.
 */
int
blog_tags_fetch(Oid nsp, const int32 *ids, int n, BlogTag *out)
{
	TagList		list;

	list.tags = out;
	list.n = 0;
	list.nids = n;
	if (n == 0)
		return 0;

	blog_fetch_by_int4(nsp, "tags", "tags_pkey", ids, n, tag_cols,
					   lengthof(tag_cols), keep_tag, &list);
	qsort(list.tags, list.n, sizeof(BlogTag), tag_cmp);
	return list.n;
}

BlogTag *
blog_tag_find(BlogTag *tags, int ntags, int32 id)
{
	BlogTag		key;

	key.id = id;
	return bsearch(&key, tags, ntags, sizeof(BlogTag), tag_cmp);
}
