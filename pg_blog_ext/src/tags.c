/*-------------------------------------------------------------------------
 *
 * tags.c
 *	  The tag_slugs and tag_names arrays of posts, for the detail page and
 *	  the cards: the posts' links from the post_tags primary key (in
 *	  tag-id order, the pages' order), then each distinct tag's row once.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/table.h"
#include "utils/rel.h"

typedef struct TagText
{
	Datum		slug;
	Datum		name;
} TagText;

static void
collect_link(const BlogEntry *entry, void *arg)
{
	List	  **links = (List **) arg;

	links[entry->key] = lappend_int(links[entry->key], blog_entry_int4(entry, 2));
}

static void
keep_tag(Datum *values, int key, void *arg)
{
	TagText    *tag = &((TagText *) arg)[key];

	tag->slug = blog_text_copy(values[0]);
	tag->name = blog_text_copy(values[1]);
}

/*
 * Set out->slugs[i] and out->names[i] to the tags of the post post_ids[i],
 * for the posts post_ids[0 .. nposts) (sorted, distinct).  A link whose
 * tag this snapshot cannot see is left out.
 */
void
blog_tag_arrays(const int32 *post_ids, int nposts, BlogTagArrays *out)
{
	static const char *const cols[] = {"slug", "name"};
	Relation	post_tags = blog_open_table(BLOG_REL_post_tags);
	Relation	pkey = blog_open_int4_index(BLOG_REL_post_tags_pkey, post_tags, 2);
	List	  **links = palloc0(sizeof(List *) * nposts);
	int32	   *ids;
	TagText    *tags;
	Datum	   *slugs;
	Datum	   *names;
	int			nlinks = 0;
	int			ntags;
	int			i;

	blog_index_lookup(post_tags, pkey, post_ids, nposts, false, collect_link, links);
	index_close(pkey, NoLock);
	table_close(post_tags, NoLock);

	for (i = 0; i < nposts; i++)
		nlinks += list_length(links[i]);
	ids = palloc(sizeof(int32) * nlinks);
	nlinks = 0;
	for (i = 0; i < nposts; i++)
	{
		ListCell   *lc;

		foreach(lc, links[i])
			ids[nlinks++] = lfirst_int(lc);
	}
	ntags = blog_sort_unique(ids, nlinks);
	tags = palloc0(sizeof(TagText) * ntags);
	blog_fetch_by_int4(BLOG_REL_tags, BLOG_REL_tags_text_idx, ids, ntags, cols,
					   lengthof(cols), keep_tag, tags);

	out->slugs = palloc(sizeof(Datum) * nposts);
	out->names = palloc(sizeof(Datum) * nposts);
	slugs = palloc(sizeof(Datum) * nlinks);
	names = palloc(sizeof(Datum) * nlinks);
	for (i = 0; i < nposts; i++)
	{
		ListCell   *lc;
		int			n = 0;

		foreach(lc, links[i])
		{
			TagText    *tag = &tags[blog_key_index(ids, ntags, lfirst_int(lc))];

			if (tag->slug != (Datum) 0)
			{
				slugs[n] = tag->slug;
				names[n] = tag->name;
				n++;
			}
		}
		out->slugs[i] = blog_text_array(slugs, n);
		out->names[i] = blog_text_array(names, n);
	}
}
