/*
 * fields.h - the template names (templates/README.md) and their ids: a card,
 * a tag and a comment each one contiguous range, as blog_frame requires.
 */
#ifndef BLOG_FIELDS_H
#define BLOG_FIELDS_H

enum
{
    F_PAGE_TITLE, F_BASE, F_POSTS, F_HEADING, F_LIMIT, F_SUM, F_BODY,
    F_COMMENTS,
    F_SLUG, F_TITLE, F_AUTHOR, F_DATE, F_COMMENTS_LABEL, F_TAGS, F_SUMMARY,
    F_TAG_SLUG, F_TAG_NAME,
    F_COMMENT_AUTHOR, F_COMMENT_BODY, F_COMMENT_DATE,
    F_COUNT
};

#define CARD_FIRST      F_SLUG
#define CARD_COUNT      (F_SUMMARY - F_SLUG + 1)

static const char *const blog_fields[F_COUNT] = {
    "page_title", "base", "posts", "heading", "limit", "sum", "body",
    "comments",
    "slug", "title", "author", "date", "comments_label", "tags", "summary",
    "tag_slug", "tag_name",
    "comment_author", "comment_body", "comment_date"
};

#endif
