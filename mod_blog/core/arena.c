/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arena.c - under AddressSanitizer each allocation is followed by a
 * poisoned gap, as PostgreSQL's memory contexts do under Valgrind: an
 * overrun of one piece into the next is caught as with a malloc apiece.
 */
#include "core/arena.h"

#include <stdalign.h>
#include <stdint.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define REDZONE 16
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define REDZONE 0
#define POISON(p, n) ((void) (p), (void) (n))
#define UNPOISON(p, n) ((void) (p), (void) (n))
#endif

#define ALIGN alignof(max_align_t)

void
blog_arena_init(blog_arena *a, void *block, size_t size)
{
    uintptr_t   at = (uintptr_t) block;
    size_t      skip = (ALIGN - at % ALIGN) % ALIGN;

    *a = (blog_arena) {block, size, (char *) block + skip,
        size > skip ? size - skip : 0, skip, 0};
    POISON(a->next, a->left);
}

void
blog_arena_done(blog_arena *a)
{
    UNPOISON(a->block, a->size);
}

/* n and its gap, to the next aligned address (n well below SIZE_MAX) */
static size_t
round_up(size_t n)
{
    return (n + REDZONE + ALIGN - 1) / ALIGN * ALIGN;
}

void *
blog_arena_alloc(void *ctx, size_t size)
{
    blog_arena *a = ctx;
    size_t      n = size ? size : 1;
    size_t      take;
    char       *p;

    if (n > a->left || (take = round_up(n)) > a->left) {
        if (a->need == 0)
            a->need = n > SIZE_MAX / 2 ? SIZE_MAX / 2 : a->used + round_up(n);
        return NULL;
    }
    p = a->next;
    UNPOISON(p, n);
    a->next += take;
    a->left -= take;
    a->used += take;
    return p;
}
