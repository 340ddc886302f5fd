/* SPDX-License-Identifier: Apache-2.0 */
/* page_pool.h - the memory pages are built in. */
#ifndef BLOG_PAGE_POOL_H
#define BLOG_PAGE_POOL_H

#include "httpd.h"

/* The pure parts' allocator (alloc.h) over the APR pool ctx: start-up's. */
void *blog_pool_alloc(void *ctx, size_t size);

/* The child's allocator for pages, or none (r->pool's then). */
void blog_page_pool_child_init(apr_pool_t *pchild, server_rec *s);

/* A pool for r's page, freed with r->pool. */
apr_pool_t *blog_page_pool(request_rec *r);

#endif
