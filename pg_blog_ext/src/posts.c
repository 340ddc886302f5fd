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
	"id", "author_id", "slug", "title", "summary", "published_at"
};

typedef struct Author
{
	int32		id;
	Datum		name;
} Author;

typedef struct AuthorList
{
	Author	   *authors;
	int			n;
	int			cap;
} AuthorList;

static int
author_cmp(const void *a, const void *b)
{
	int32		x = ((const Author *) a)->id;
	int32		y = ((const Author *) b)->id;

	return (x > y) - (x < y);
}

static void
check_not_null(bool *isnull, int n, const char *const *cols)
{
	int			i;

	for (i = 0; i < n; i++)
		if (isnull[i])
			elog(ERROR, "unexpected null in column %s", cols[i]);
}

/*
 * Fill post from the values of the columns blog_post_cols, copying its
 * texts out of the row.
 */
void
blog_post_set(BlogPost *post, Datum *values, bool *isnull)
{
	check_not_null(isnull, BLOG_POST_NCOLS, blog_post_cols);
	post->id = DatumGetInt32(values[0]);
	post->author_id = DatumGetInt32(values[1]);
	post->slug = blog_text_copy(values[2]);
	post->title = blog_text_copy(values[3]);
	post->summary = blog_text_copy(values[4]);
	post->published_at = DatumGetTimestampTz(values[5]);
	post->author = (Datum) 0;
}

static const char *const author_cols[] = {"id", "name"};

static void
keep_author(Datum *values, bool *isnull, void *arg)
{
	AuthorList *list = (AuthorList *) arg;

	check_not_null(isnull, lengthof(author_cols), author_cols);
	/* a key appears once; more rows than keys means a broken table */
	if (list->n == list->cap)
		elog(ERROR, "duplicate author id %d", DatumGetInt32(values[0]));
	list->authors[list->n].id = DatumGetInt32(values[0]);
	list->authors[list->n].name = blog_text_copy(values[1]);
	list->n++;
}

/*
 * Set the author name of posts[0 .. n), reading each distinct author once
 * by key.
 */
void
blog_posts_authors(Oid nsp, BlogPost *posts, int n)
{
	int32	   *ids = palloc(sizeof(int32) * (n + 1));
	AuthorList	list;
	int			nids = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		int			j;

		for (j = 0; j < nids && ids[j] != posts[i].author_id; j++)
			;
		if (j == nids)
			ids[nids++] = posts[i].author_id;
	}
	list.authors = palloc(sizeof(Author) * (nids + 1));
	list.n = 0;
	list.cap = nids;
	blog_fetch_by_int4(nsp, "authors", "authors_pkey", ids, nids,
					   author_cols, lengthof(author_cols), keep_author, &list);
	qsort(list.authors, list.n, sizeof(Author), author_cmp);

	for (i = 0; i < n; i++)
	{
		Author		key;
		Author	   *hit;

		key.id = posts[i].author_id;
		hit = bsearch(&key, list.authors, list.n, sizeof(Author), author_cmp);
		if (hit == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FOREIGN_KEY_VIOLATION),
					 errmsg("author %d of post %d not found", key.id, posts[i].id)));
		posts[i].author = hit->name;
	}
}
