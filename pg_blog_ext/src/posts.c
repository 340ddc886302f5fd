/*-------------------------------------------------------------------------
 *
 * posts.c
 *	  What a post card shows of a post row, with its author's name.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/htup_details.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

typedef struct Author
{
	int32		id;
	Datum		name;
} Author;

static int
author_cmp(const void *a, const void *b)
{
	int32		x = ((const Author *) a)->id;
	int32		y = ((const Author *) b)->id;

	return (x > y) - (x < y);
}

/* The name of each distinct author of the posts, sorted by author id. */
static Author *
fetch_authors(Oid nsp, BlogPost *posts, int nposts, int *nauthors)
{
	int32	   *ids = palloc(sizeof(int32) * (nposts + 1));
	HeapTuple  *tuples;
	Author	   *authors;
	TupleDesc	desc;
	Relation	rel;
	AttrNumber	id_att;
	AttrNumber	name_att;
	int			nids = 0;
	int			n;
	int			i;

	for (i = 0; i < nposts; i++)
	{
		int			j;

		for (j = 0; j < nids && ids[j] != posts[i].author_id; j++)
			;
		if (j == nids)
			ids[nids++] = posts[i].author_id;
	}
	tuples = palloc(sizeof(HeapTuple) * (nids + 1));
	n = blog_fetch_by_int4(nsp, "authors", "authors_pkey", ids, nids, tuples, &desc);

	rel = RelationIdGetRelation(blog_relid(nsp, "authors"));
	id_att = blog_attnum(rel, "id");
	name_att = blog_attnum(rel, "name");
	RelationClose(rel);

	authors = palloc(sizeof(Author) * (n + 1));
	for (i = 0; i < n; i++)
	{
		authors[i].id = blog_int4_attr(tuples[i], desc, id_att);
		authors[i].name = blog_text_attr(tuples[i], desc, name_att);
	}
	qsort(authors, n, sizeof(Author), author_cmp);
	*nauthors = n;
	return authors;
}

/*
 * Fill posts[0 .. n) from rows of blog.posts (desc is their row type) and
 * the names of their authors, read by key once per distinct author.
 */
void
blog_posts_fill(Oid nsp, HeapTuple *tuples, int n, TupleDesc desc,
				BlogPost *posts)
{
	Relation	rel;
	AttrNumber	att_id,
				att_author,
				att_slug,
				att_title,
				att_summary,
				att_published;
	Author	   *authors;
	int			nauthors;
	int			i;

	rel = RelationIdGetRelation(blog_relid(nsp, "posts"));
	att_id = blog_attnum(rel, "id");
	att_author = blog_attnum(rel, "author_id");
	att_slug = blog_attnum(rel, "slug");
	att_title = blog_attnum(rel, "title");
	att_summary = blog_attnum(rel, "summary");
	att_published = blog_attnum(rel, "published_at");
	RelationClose(rel);

	for (i = 0; i < n; i++)
	{
		bool		isnull;

		posts[i].id = blog_int4_attr(tuples[i], desc, att_id);
		posts[i].author_id = blog_int4_attr(tuples[i], desc, att_author);
		posts[i].slug = blog_text_attr(tuples[i], desc, att_slug);
		posts[i].title = blog_text_attr(tuples[i], desc, att_title);
		posts[i].summary = blog_text_attr(tuples[i], desc, att_summary);
		posts[i].published_at =
			DatumGetTimestampTz(heap_getattr(tuples[i], att_published, desc, &isnull));
		if (isnull)
			elog(ERROR, "unexpected null in column %d", att_published);
	}

	authors = fetch_authors(nsp, posts, n, &nauthors);
	for (i = 0; i < n; i++)
	{
		Author		key;
		Author	   *hit;

		key.id = posts[i].author_id;
		hit = bsearch(&key, authors, nauthors, sizeof(Author), author_cmp);
		if (hit == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FOREIGN_KEY_VIOLATION),
					 errmsg("author %d of post %d not found", key.id, posts[i].id)));
		posts[i].author = hit->name;
	}
}
