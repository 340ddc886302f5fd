/* SPDX-License-Identifier: Apache-2.0 */
/* response.h - a blog response: status, headers and body in one brigade. */
#ifndef BLOG_RESPONSE_H
#define BLOG_RESPONSE_H

#include "httpd.h"

/*
 * Send status, the headers it needs (X-Cache unless NULL), and body, which
 * lives as long as r->pool.  OK, or 304/412 for the caller to return.
 */
int blog_respond(request_rec *r, int status, const char *body,
                 apr_size_t len, const char *xcache);

/* The 416 of a Range that misses one of the blog's pages says its length. */
void blog_response_register_hooks(void);

#endif
