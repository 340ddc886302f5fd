/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve.h - one request under the blog's mount, from route to response.
 */
#ifndef BLOG_SERVE_H
#define BLOG_SERVE_H

#include "httpd.h"

#include "httpd/site.h"

/* path[0..len) is the raw request path after the mount prefix. */
int blog_serve(request_rec *r, const blog_site *site, const char *path,
               apr_size_t len);

#endif
