/*
 * fields.h - the template field table of the tests: the names of
 * templates/README.md, in the order mod_blog's pages.c uses, so that a
 * card, a tag and a comment each cover one contiguous range of ids.
 */
#ifndef BLOG_TEST_FIELDS_H
#define BLOG_TEST_FIELDS_H

enum
{
    F_PAGE_TITLE, F_BASE, F_POSTS, F_HEADING, F_LIMIT, F_SUM, F_BODY,
    F_COMMENTS,
    F_SLUG, F_TITLE, F_AUTHOR, F_DATE, F_COMMENTS_LABEL, F_TAGS, F_SUMMARY,
    F_TAG_SLUG, F_TAG_NAME,
    F_COMMENT_AUTHOR, F_COMMENT_DATE, F_COMMENT_BODY,
    F_COUNT
};

static const char *const t_fields[F_COUNT] = {
    "page_title", "base", "posts", "heading", "limit", "sum", "body",
    "comments",
    "slug", "title", "author", "date", "comments_label", "tags", "summary",
    "tag_slug", "tag_name",
    "comment_author", "comment_date", "comment_body"
};

#endif
