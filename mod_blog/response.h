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
 * Retry-After for 503), and for a 200 a strong ETag made from the body.
 * body must live as long as r->pool.  Returns OK, or the status of a
 * conditional request that must not get the body (304, 412): the caller
 * returns it for Apache to answer.
 */
int blog_respond(request_rec *r, int status, const char *body,
                 apr_size_t len, const char *xcache);

#endif
