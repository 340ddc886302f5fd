/*
 * response.h - writing a blog response: status, headers and body in one
 * brigade.
 */
#ifndef BLOG_RESPONSE_H
#define BLOG_RESPONSE_H

#include "httpd.h"

/*
 * Send status with Content-Type, an exact Content-Length, X-Cache when
 * xcache is not NULL, and the headers the status needs (Allow for 405,
 * Retry-After for 503).  body must live as long as r->pool.  Returns OK.
 */
int blog_respond(request_rec *r, int status, const char *body,
                 apr_size_t len, const char *xcache);

#endif
