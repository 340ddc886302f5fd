/* pages.h - the page of each route: one pg_blog call built (or 404/503). */
#ifndef BLOG_PAGES_H
#define BLOG_PAGES_H

#include "httpd.h"

#include "build.h"
#include "site.h"

void blog_pages_child_init(apr_pool_t *pchild, server_rec *s);
void blog_page_index(request_rec *r, const blog_site *site, blog_page *out);
void blog_page_post(request_rec *r, const blog_site *site, const char *slug,
                    apr_size_t slug_len, blog_page *out);
void blog_page_tag(request_rec *r, const blog_site *site, const char *slug,
                   apr_size_t slug_len, blog_page *out);
void blog_page_compute(request_rec *r, const blog_site *site,
                       blog_page *out);

#endif
