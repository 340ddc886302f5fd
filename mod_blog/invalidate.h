/*
 * invalidate.h - the cache invalidation listener: one per Apache instance,
 * it LISTENs on pg_blog's channel blog_cache and deletes from Redis the
 * page keys each committed change names (docs/CONTRACT.md section 3 names
 * the keys).
 */
#ifndef BLOG_INVALIDATE_H
#define BLOG_INVALIDATE_H

/* The channel pg_blog's triggers NOTIFY (pg_blog--1.2.sql). */
#define BLOG_INVALIDATE_CHANNEL "blog_cache"

/* Registers the post_config and child_init hooks that start it. */
void blog_invalidate_register_hooks(void);

#endif
