/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fields.h - the template names (templates/README.md) and their ids: a card,
 * a tag and a comment each one contiguous range, as blog_frame requires.
 */
#ifndef BLOG_FIELDS_H
#define BLOG_FIELDS_H

enum
{
    BLOG_F_PAGE_TITLE, BLOG_F_BASE, BLOG_F_POSTS, BLOG_F_HEADING,
    BLOG_F_LIMIT, BLOG_F_SUM, BLOG_F_BODY, BLOG_F_COMMENTS,
    BLOG_F_SLUG, BLOG_F_TITLE, BLOG_F_AUTHOR, BLOG_F_DATE,
    BLOG_F_COMMENTS_LABEL, BLOG_F_TAGS, BLOG_F_SUMMARY,
    BLOG_F_TAG_SLUG, BLOG_F_TAG_NAME,
    BLOG_F_COMMENT_AUTHOR, BLOG_F_COMMENT_BODY, BLOG_F_COMMENT_DATE,
    BLOG_F_COUNT
};

#define BLOG_CARD_FIRST BLOG_F_SLUG
#define BLOG_CARD_COUNT (BLOG_F_SUMMARY - BLOG_F_SLUG + 1)

/* Each id's name, for the templates' compiler (build.c). */
extern const char *const blog_fields[BLOG_F_COUNT];

#endif
