/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seed.h - the contract's seed (docs/CONTRACT.md section 1), for the tests.
 */
#ifndef BLOG_TEST_SEED_H
#define BLOG_TEST_SEED_H

#include "harness.h"

extern const char *const t_author_names[10];   /* by (id - 1) */
extern const char *const t_titles[8];
extern const char *const t_readers[6];
extern const char *const t_comment_texts[4];

#define LOREM "Lorem ipsum dolor sit amet, consectetur adipiscing elit & " \
    "sed do <eiusmod> tempor. "

/* 2025-01-01 00:00 UTC, the first post's published_at, in Unix time */
#define T_FIRST_POST 1735689600

const char *t_tag_name(t_arena *a, int t);
int t_comment_count(int p);
/* Tag ids of post p, ascending; returns how many. */
int t_post_tags(int p, int ids[3]);
int t_post_has_tag(int p, int t);
/* published_at of post p plus extra minutes, as "YYYY-MM-DD HH:MM" UTC. */
const char *t_date_of(t_arena *a, int p, int minutes);
const char *t_comments_label(t_arena *a, int n);

#endif
