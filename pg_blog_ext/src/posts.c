/*-------------------------------------------------------------------------
 *
 * posts.c
 *	  What a post card shows of a post row, with its author's name.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "utils/timestamp.h"

/* The columns of blog.posts that blog_post_set() reads, in its order. */
const char *const blog_post_cols[BLOG_POST_NCOLS] = {
	"id", "author_id", "slug", "title", "summary", "published_at",
	"comment_count", "tag_ids"
};

/*
 * Fill post from the values of the columns blog_post_cols, copying its
 * texts out of the row.
 */
void
blog_post_set(BlogPost *post, const Datum *values)
{
	post->id = DatumGetInt32(values[0]);
	post->author_id = DatumGetInt32(values[1]);
	post->slug = blog_text_copy(values[2]);
	post->title = blog_text_copy(values[3]);
	post->summary = blog_text_copy(values[4]);
	post->published_at = DatumGetTimestampTz(values[5]);
	post->comment_count = DatumGetInt32(values[6]);
	post->tag_ids = blog_int4_array_copy(values[7]);
	post->author = (Datum) 0;
}

static void
keep_name(Datum *values, int key, void *arg)
{
	((Datum *) arg)[key] = blog_text_copy(values[0]);
}

/*
 * Set the author name of posts[0 .. n), reading each distinct author once
 * by key.
 */
void
blog_posts_authors(BlogPost *posts, int n)
{
	static const char *const cols[] = {"name"};
	int32	   *ids = palloc(sizeof(int32) * n);
	Datum	   *names;
	int			nids;
	int			i;

	for (i = 0; i < n; i++)
		ids[i] = posts[i].author_id;
	nids = blog_sort_unique(ids, n);
	names = palloc0(sizeof(Datum) * nids);
	blog_fetch_by_int4(BLOG_REL_authors, BLOG_REL_authors_name_idx, ids, nids,
					   cols, lengthof(cols), keep_name, names);

	for (i = 0; i < n; i++)
	{
		int			k = blog_key_index(ids, nids, posts[i].author_id);

		if (names[k] == (Datum) 0)
			ereport(ERROR,
					(errcode(ERRCODE_FOREIGN_KEY_VIOLATION),
					 errmsg("author %d of post %d not found",
							posts[i].author_id, posts[i].id)));
		posts[i].author = names[k];
	}
	pfree(ids);
}
