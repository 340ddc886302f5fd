/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alloc.h - the pure parts' allocator: an APR pool in Apache, a malloc per
 * call in tests (ASan sees any overrun).  The callee never frees.
 */
#ifndef BLOG_ALLOC_H
#define BLOG_ALLOC_H

#include <stddef.h>

typedef void *(*blog_alloc_fn) (void *ctx, size_t size);

#endif
