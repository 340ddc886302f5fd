/* SPDX-License-Identifier: Apache-2.0 */
/*-------------------------------------------------------------------------
 *
 * tags.c
 *	  The tag_slugs and tag_names arrays of posts, for the detail page and
 *	  the cards: each post's tag_ids (kept on its row, in tag-id order, the
 *	  pages' order, by the triggers on post_tags), then each distinct tag's
 *	  row once.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "catalog/pg_type.h"
#include "utils/array.h"

typedef struct TagText
{
	Datum		slug;
	Datum		name;
} TagText;

/*
 * A copy of an int4[] value that may point into a shared buffer or an
 * index entry, detoasted, and checked to be what blog_tag_arrays() reads:
 * one dimension (or none) and no nulls.
 */
Datum
blog_int4_array_copy(Datum value)
{
	ArrayType  *a = DatumGetArrayTypePCopy(value);

	if (ARR_NDIM(a) > 1 || ARR_HASNULL(a) || ARR_ELEMTYPE(a) != INT4OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("column \"tag_ids\" of blog.posts holds an array pg_blog cannot read"),
				 errdetail("Each value must be a one-dimensional int4 array without nulls.")));
	return PointerGetDatum(a);
}

static inline int
int4_array_length(ArrayType *a)
{
	return ARR_NDIM(a) == 0 ? 0 : ARR_DIMS(a)[0];
}

static void
keep_tag(Datum *values, int key, void *arg)
{
	TagText    *tag = &((TagText *) arg)[key];

	tag->slug = blog_text_copy(values[0]);
	tag->name = blog_text_copy(values[1]);
}

/*
 * Set out->slugs[i] and out->names[i] to the tags named by tag_ids[i]
 * (blog_int4_array_copy()), in its order, for nposts posts.  A tag this
 * snapshot cannot see is left out.
 */
void
blog_tag_arrays(const Datum *tag_ids, int nposts, BlogTagArrays *out)
{
	int32	   *ids;
	TagText    *tags;
	Datum	   *slugs;
	Datum	   *names;
	int			nlinks = 0;
	int			maxlinks = 0;
	int			ntags;
	int			i;

	for (i = 0; i < nposts; i++)
	{
		int			n = int4_array_length((ArrayType *) DatumGetPointer(tag_ids[i]));

		nlinks += n;
		maxlinks = Max(maxlinks, n);
	}
	ids = palloc(sizeof(int32) * Max(nlinks, 1));
	nlinks = 0;
	for (i = 0; i < nposts; i++)
	{
		ArrayType  *a = (ArrayType *) DatumGetPointer(tag_ids[i]);
		int			n = int4_array_length(a);

		memcpy(ids + nlinks, ARR_DATA_PTR(a), sizeof(int32) * n);
		nlinks += n;
	}
	/* the distinct tags, each read once, by one walk of their index */
	ntags = blog_sort_unique(ids, nlinks);
	tags = palloc0(sizeof(TagText) * Max(ntags, 1));
	blog_fetch_by_int4(BLOG_READ_TAG_TEXTS, ids, ntags, keep_tag, tags);

	out->slugs = palloc(sizeof(Datum) * nposts);
	out->names = palloc(sizeof(Datum) * nposts);
	slugs = palloc(sizeof(Datum) * Max(maxlinks, 1));
	names = palloc(sizeof(Datum) * Max(maxlinks, 1));
	for (i = 0; i < nposts; i++)
	{
		ArrayType  *a = (ArrayType *) DatumGetPointer(tag_ids[i]);
		const int32 *link = (const int32 *) ARR_DATA_PTR(a);
		int			nlink = int4_array_length(a);
		int			n = 0;
		int			j;

		for (j = 0; j < nlink; j++)
		{
			int			k = blog_key_index(ids, ntags, link[j]);

			if (k >= 0 && tags[k].slug != (Datum) 0)
			{
				slugs[n] = tags[k].slug;
				names[n] = tags[k].name;
				n++;
			}
		}
		out->slugs[i] = blog_text_array(slugs, n);
		out->names[i] = blog_text_array(names, n);
	}
}
