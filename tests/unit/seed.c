/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seed.c - the seed formulas of docs/CONTRACT.md section 1, written again
 * from the text, independently of pg_blog's SQL: the unit tests build the
 * reference pages' values (test_golden.c) and pg_blog's rows (test_build.c)
 * from them.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

#include "seed.h"

const char *const t_author_names[10] = {
    "Ada Lovelace", "Alan Turing", "Zo\xc3\xab O'Brien", "Grace Hopper",
    "Edsger W. Dijkstra", "Barbara Liskov", "\xe6\x9d\x8e\xe4\xbc\x9f",
    "Donald Knuth", "Frances \"Fran\" Allen", "Ken & Dennis"
};

const char *const t_titles[8] = {
    "Getting started", "Fish & Chips", "Why <b>bold</b> matters",
    "\"Quoted\" thoughts", "It's complicated", "Caf\xc3\xa9 society",
    "\xe6\x95\xb0\xe6\x8d\xae\xe5\xba\x93 notes", "Plain words"
};

const char *const t_readers[6] = {
    "Reader One", "Sam & Max", "J\xc3\xbcrgen", "<anon>", "O'Hara",
    "Quinn \"Q\""
};

const char *const t_comment_texts[4] = {
    "Great post!", "I disagree & here is why.", "See <https://example.com>.",
    "Thanks \xe2\x80\x94 \"very\" helpful."
};

const char *
t_tag_name(t_arena *a, int t)
{
    switch (t) {
    case 5:
        return "C & C++";
    case 12:
        return "Z\xc3\xbcrich";
    case 21:
        return "<script>";
    case 30:
        return "\"Quoted\"";
    default:
        return t_arena_printf(a, "Topic %d", t);
    }
}

int
t_comment_count(int p)
{
    return p % 2 ? p % 21 : 20 - ((p - 1) % 21);
}

/* Tag ids of post p, ascending; returns how many. */
int
t_post_tags(int p, int ids[3])
{
    int n = p % 5 < 3 ? 3 : 2;
    int k;
    int i;

    for (k = 0; k < n; k++)
        ids[k] = ((7 * p + 11 * k) % 30) + 1;
    for (k = 1; k < n; k++)
        for (i = k; i > 0 && ids[i - 1] > ids[i]; i--) {
            int t = ids[i];

            ids[i] = ids[i - 1];
            ids[i - 1] = t;
        }
    return n;
}

int
t_post_has_tag(int p, int t)
{
    int ids[3];
    int n = t_post_tags(p, ids);
    int k;

    for (k = 0; k < n; k++)
        if (ids[k] == t)
            return 1;
    return 0;
}

/* published_at of post p plus extra minutes, as "YYYY-MM-DD HH:MM" UTC. */
const char *
t_date_of(t_arena *a, int p, int minutes)
{
    time_t t = (time_t) T_FIRST_POST + (time_t) (p - 1) * 6 * 3600
        + minutes * 60;
    struct tm tm;
    char *s = t_arena_alloc(a, 17);

    gmtime_r(&t, &tm);
    strftime(s, 17, "%Y-%m-%d %H:%M", &tm);
    return s;
}

const char *
t_comments_label(t_arena *a, int n)
{
    return n == 1 ? "1 comment" : t_arena_printf(a, "%d comments", n);
}

