/* SPDX-License-Identifier: Apache-2.0 */
/* invalidate.h - the listener that deletes the keys each commit names. */
#ifndef BLOG_INVALIDATE_H
#define BLOG_INVALIDATE_H

#include "httpd.h"

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

/* The mutex (pre_config, post_config), the thread (child_init, stopping). */
void blog_invalidate_register_hooks(void);

#endif
