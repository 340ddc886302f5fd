/*
 * pages.h - the page of each route: for the database pages one call of a
 * pg_blog function, its rows built into the page (build.h), the 404 page
 * when there is no row and the 503 page when the call fails; /compute's
 * loop.
 */
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
