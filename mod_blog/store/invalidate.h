/* SPDX-License-Identifier: Apache-2.0 */
/* invalidate.h - the listener that deletes the keys each commit names. */
#ifndef BLOG_INVALIDATE_H
#define BLOG_INVALIDATE_H

#include "httpd.h"
#include "apr_proc_mutex.h"

#include "store/cache.h"
#include "store/db.h"

/*
 * From post_config, every generation: conninfo NULL is the pool's; bases
 * are the mounts that serve the blog.  No cache or no mount: no listener.
 */
void blog_invalidate_configure(apr_pool_t *pconf, server_rec *s, int on,
                               const char *conninfo,
                               const blog_db_settings *db,
                               const blog_cache_settings *cache,
                               const char *const *bases, int nbases);

/* Whether configure left a listener to run (a cache and a mount). */
int blog_invalidate_wanted(void);

/*
 * After configure, in the parent: mutex elects the listening child; the
 * shared record of what was heard, if sealed pages need it (its failure
 * returned: the listener runs without it).
 */
apr_status_t blog_invalidate_prepare(apr_pool_t *pconf,
                                     apr_proc_mutex_t *mutex);

/* In a child: the listener's thread, joined by pchild's cleanup. */
apr_status_t blog_invalidate_start(apr_pool_t *pchild);

/*
 * The thread told to stop, once: it ends its step (each is bounded), lets
 * go of the mutex and returns.  Nothing waits for it here.
 */
void blog_invalidate_stop_soon(void);

#endif
