/* SPDX-License-Identifier: Apache-2.0 */
/* pages.h - the page of each route: one pg_blog call built (or 404/503). */
#ifndef BLOG_PAGES_H
#define BLOG_PAGES_H

#include "httpd.h"

#include "core/build.h"
#include "core/router.h"
#include "httpd/site.h"

/* A site's 404 and 503 pages, rendered once into p: 0, or -1. */
int blog_pages_site(apr_pool_t *p, blog_site *site);

void blog_page_for(request_rec *r, const blog_site *site,
                   const blog_route *rt, blog_page *out);

#endif
