/* SPDX-License-Identifier: Apache-2.0 */
/*-------------------------------------------------------------------------
 *
 * cards.c
 *	  The post cards of the index and tag pages: each post with its tags
 *	  and comment count, both kept on the post's row (its comment_count and
 *	  tag_ids, which the triggers of the extension script keep right), so
 *	  that a card costs no read of comments or post_tags.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

/*
 * Return the posts as cards, in the order given, each row starting with
 * the npre values of prefix.
 */
void
blog_cards_emit(FunctionCallInfo fcinfo, BlogPost *posts, int nposts,
				Datum *prefix, int npre)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum	   *tag_ids = palloc(sizeof(Datum) * nposts);
	BlogTagArrays tags;
	int			i;

	Assert(npre <= BLOG_CARD_MAX_PREFIX);
	for (i = 0; i < nposts; i++)
		tag_ids[i] = posts[i].tag_ids;
	blog_tag_arrays(tag_ids, nposts, &tags);

	for (i = 0; i < nposts; i++)
	{
		Datum		values[BLOG_CARD_MAX_PREFIX + BLOG_CARD_COLS];
		bool		nulls[BLOG_CARD_MAX_PREFIX + BLOG_CARD_COLS] = {0};
		Datum	   *v = values + npre;

		CHECK_FOR_INTERRUPTS();
		if (npre > 0)
			memcpy(values, prefix, sizeof(Datum) * npre);
		v[0] = posts[i].slug;
		v[1] = posts[i].title;
		v[2] = posts[i].author;
		v[3] = TimestampTzGetDatum(posts[i].published_at);
		v[4] = Int32GetDatum(posts[i].comment_count);
		v[5] = tags.slugs[i];
		v[6] = tags.names[i];
		v[7] = posts[i].summary;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}
