/*
 * alloc.h - the allocator the pure parts (template engine, decoding, page
 * building) take from their caller: an APR pool in Apache, one malloc
 * block per call in the unit tests and fuzzers, so that ASan and valgrind
 * see an overrun of any buffer.  Memory is never freed by the callee.
 */
#ifndef BLOG_ALLOC_H
#define BLOG_ALLOC_H

#include <stddef.h>

typedef void *(*blog_alloc_fn) (void *ctx, size_t size);

#endif
