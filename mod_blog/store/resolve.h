/* SPDX-License-Identifier: Apache-2.0 */
/*
 * resolve.h - a host name looked up by a deadline.  getaddrinfo has none:
 * a resolver that does not answer would hold the thread that asks, and
 * every thread waiting behind it.  The look-up runs in a thread of its
 * own; one still under way at the deadline goes on, and the next call
 * for the same name and port takes its answer.
 */
#ifndef BLOG_RESOLVE_H
#define BLOG_RESOLVE_H

#include "apr_time.h"

#include <netdb.h>

/* A look-up under way, or answered and not yet taken. */
typedef struct blog_lookup blog_lookup;

/*
 * host:port's addresses, IPv4 ones first (as hiredis orders them), by the
 * deadline: 0 with *res (freeaddrinfo), or -1 with why.  An address is
 * parsed at once; a name is looked up, or the look-up in *pending taken.
 * *pending holds a look-up that had not answered by the deadline.
 */
int blog_resolve(blog_lookup **pending, const char *host, int port,
                 apr_time_t deadline, struct addrinfo **res, char *why,
                 apr_size_t why_len);

/* *pending let go of: freed now, or by its thread when it answers. */
void blog_resolve_forget(blog_lookup **pending);

#endif
