/* SPDX-License-Identifier: Apache-2.0 */
/*-------------------------------------------------------------------------
 *
 * post_page.c
 *	  blog.post_page(slug): one post, its tags and its comments.
 *
 *	  The post by its slug, its author by key (posts.c), its tags from its
 *	  tag_ids as the cards read theirs (tags.c), its comments from
 *	  (post_id, created_at, id), which is the page's order.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(blog_post_page);

enum
{
	COL_TITLE,
	COL_AUTHOR,
	COL_PUBLISHED,
	COL_BODY,
	COL_TAG_SLUGS,
	COL_TAG_NAMES,
	COL_COMMENT_AUTHORS,
	COL_COMMENT_BODIES,
	COL_COMMENT_TIMES,
	NUM_COLS
};

/*
 * The comments' columns as they are read, in arrays that grow by doubling:
 * one palloc per array rather than a cell and a struct per comment.
 */
typedef struct Comments
{
	int			n;
	int			size;
	Datum	   *authors;
	Datum	   *bodies;
	Datum	   *times;
} Comments;

static void
keep_comment(Datum *values, int key, void *arg)
{
	Comments   *c = (Comments *) arg;

	(void) key;
	if (c->n == c->size)
	{
		c->size *= 2;
		c->authors = repalloc(c->authors, sizeof(Datum) * c->size);
		c->bodies = repalloc(c->bodies, sizeof(Datum) * c->size);
		c->times = repalloc(c->times, sizeof(Datum) * c->size);
	}
	/* the next row may unpin this one's buffer */
	c->authors[c->n] = blog_text_copy(values[0]);
	c->bodies[c->n] = blog_text_copy(values[1]);
	c->times[c->n] = values[2];
	c->n++;
}

/* The post's comments, oldest first: the order of (post_id, created_at, id) */
static void
fetch_comments(int32 post_id, Datum *values)
{
	Comments	c;

	c.n = 0;
	c.size = 16;
	c.authors = palloc(sizeof(Datum) * c.size);
	c.bodies = palloc(sizeof(Datum) * c.size);
	c.times = palloc(sizeof(Datum) * c.size);
	blog_fetch_by_int4(BLOG_READ_COMMENTS, &post_id, 1, keep_comment, &c);
	/* no comments: '{}', as construct_array() makes an empty array */
	values[COL_COMMENT_AUTHORS] = blog_text_array(c.authors, c.n);
	values[COL_COMMENT_BODIES] = blog_text_array(c.bodies, c.n);
	values[COL_COMMENT_TIMES] =
		PointerGetDatum(construct_array(c.times, c.n, TIMESTAMPTZOID,
										sizeof(TimestampTz), FLOAT8PASSBYVAL,
										TYPALIGN_DOUBLE));
}

static void
keep_post(Datum *values, int key, void *arg)
{
	Datum	   *row = (Datum *) arg;

	(void) key;
	memcpy(row, values, sizeof(Datum) * BLOG_DETAIL_NCOLS);
	/* the texts are copied before the buffer is unpinned */
	row[BLOG_DETAIL_TITLE] = blog_text_copy(values[BLOG_DETAIL_TITLE]);
	row[BLOG_DETAIL_BODY] = blog_text_copy(values[BLOG_DETAIL_BODY]);
	/* (Datum) 0 in a schema before 1.3: blog_posts_copies() finds them */
	if (values[BLOG_DETAIL_TAG_IDS] != (Datum) 0)
		row[BLOG_DETAIL_TAG_IDS] =
			blog_int4_array_copy(values[BLOG_DETAIL_TAG_IDS]);
}

static void
post_page(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		row[BLOG_DETAIL_NCOLS];
	Datum		values[NUM_COLS];
	bool		nulls[NUM_COLS] = {0};
	BlogPost	post = {0};
	BlogTagArrays tags;

	if (!blog_page_by_slug(fcinfo, BLOG_READ_POST_BY_SLUG, keep_post, row))
		return;

	post.id = DatumGetInt32(row[BLOG_DETAIL_ID]);
	post.author_id = DatumGetInt32(row[BLOG_DETAIL_AUTHOR_ID]);
	post.tag_ids = row[BLOG_DETAIL_TAG_IDS];
	blog_posts_copies(&post, 1);
	blog_posts_authors(&post, 1);
	blog_tag_arrays(&post.tag_ids, 1, &tags);

	values[COL_TITLE] = row[BLOG_DETAIL_TITLE];
	values[COL_AUTHOR] = post.author;
	values[COL_PUBLISHED] = row[BLOG_DETAIL_PUBLISHED];
	values[COL_BODY] = row[BLOG_DETAIL_BODY];
	values[COL_TAG_SLUGS] = tags.slugs[0];
	values[COL_TAG_NAMES] = tags.names[0];
	fetch_comments(post.id, values);

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

Datum
blog_post_page(PG_FUNCTION_ARGS)
{
	return blog_page(fcinfo, post_page);
}
