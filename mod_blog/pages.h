/*
 * pages.h - one function per page: pg_blog's rows into template frames,
 * rendered into one buffer from r->pool.
 */
#ifndef BLOG_PAGES_H
#define BLOG_PAGES_H

#include "httpd.h"
#include "mod_blog.h"

typedef struct blog_page
{
    int         status;         /* 200, 404 or 503 */
    const char *body;
    apr_size_t  len;
} blog_page;

/*
 * Compile every page of <dir> (each wrapped in layout.html).  NULL on
 * error, with "file:line: message" in err.
 */
const struct blog_templates *blog_templates_load(apr_pool_t *p,
                                                 const char *dir, char *err,
                                                 apr_size_t errlen);

/* The pages that depend on nothing but the mount, rendered at start-up. */
int blog_page_not_found(apr_pool_t *p, const blog_settings *g,
                        const char *base, apr_size_t base_len,
                        blog_page *out);
int blog_page_unavailable(apr_pool_t *p, const blog_settings *g,
                          const char *base, apr_size_t base_len,
                          blog_page *out);

void blog_page_index(request_rec *r, const blog_site *site, blog_page *out);
void blog_page_post(request_rec *r, const blog_site *site, const char *slug,
                    apr_size_t slug_len, blog_page *out);
void blog_page_tag(request_rec *r, const blog_site *site, const char *slug,
                   apr_size_t slug_len, blog_page *out);
void blog_page_compute(request_rec *r, const blog_site *site,
                       blog_page *out);

#endif
