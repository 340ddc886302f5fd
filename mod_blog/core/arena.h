/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arena.h - one block the caller lends for a page, cut up as the page is
 * built: the pure parts allocate without calling back up into httpd.  When
 * the block is too small the allocation fails and the arena says how much
 * it would have needed, so the caller can build again in a larger one.
 */
#ifndef BLOG_ARENA_H
#define BLOG_ARENA_H

#include <stddef.h>

typedef struct blog_arena
{
    char       *block;
    size_t      size;
    char       *next;
    size_t      left;
    size_t      used;           /* out: bytes taken, padding included */
    size_t      need;           /* out: 0, or the size the block lacked */
} blog_arena;

void blog_arena_init(blog_arena *a, void *block, size_t size);

/* Done cutting: under AddressSanitizer, the gaps made addressable again
 * before the block goes back to its owner. */
void blog_arena_done(blog_arena *a);

/* A blog_alloc_fn (alloc.h) over the blog_arena ctx: NULL once spent. */
void *blog_arena_alloc(void *ctx, size_t size);

#endif
