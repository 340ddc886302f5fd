/*
 * invalidate.h - the cache invalidation listener: one per Apache instance,
 * it LISTENs on pg_blog's channel blog_cache and deletes from Redis the
 * page keys each committed change names (docs/CONTRACT.md section 3 names
 * the keys).
 */
#ifndef BLOG_INVALIDATE_H
#define BLOG_INVALIDATE_H

#include "httpd.h"

#include "cache.h"
#include "db.h"

/* The channel pg_blog's triggers NOTIFY (pg_blog--1.1--1.2.sql). */
#define BLOG_INVALIDATE_CHANNEL "blog_cache"

/*
 * From mod_blog.c's check_config, in the parent, every generation: on is
 * BlogInvalidate; conninfo BlogInvalidateDatabase (NULL: the pool's
 * BlogDatabase); bases are the mounts of the servers that serve the
 * blog ("" for "/"), whose keys carry them.  No listener runs without a
 * cache or a mount.  The settings must live as long as pconf.
 */
void blog_invalidate_configure(apr_pool_t *pconf, server_rec *s, int on,
                               const char *conninfo,
                               const blog_db_settings *db,
                               const blog_cache_settings *cache,
                               const char *const *bases, int nbases);

/*
 * Its hooks: the mutex (pre_config, post_config), the thread (child_init,
 * child_stopping).
 */
void blog_invalidate_register_hooks(void);

#endif
