/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.h - the module's configuration: one blog_config per server, filled
 * by the directives of directives.h, a virtual host's merged over the main
 * server's.
 */
#ifndef BLOG_CONFIG_H
#define BLOG_CONFIG_H

#include "httpd.h"
#include "http_config.h"

#include "httpd/directives.h"
#include "httpd/site.h"
#include "store/cache.h"
#include "store/db.h"

typedef struct blog_mount
{
    const char *path;           /* without trailing slash; NULL: unset */
    int         shared;
} blog_mount;

/* One per server: every directive's value, which were set, and where. */
typedef struct blog_config
{
    blog_mount  mount;
    int         fast_path;
    blog_db_settings db;
    blog_cache_settings cache;
    int         invalidate;     /* BlogInvalidate */
    const char *invalidate_db;  /* BlogInvalidateDatabase; NULL: unset */
    const char *templates_dir;
    int         compute_limit;
    apr_interval_time_t conn_hold;
    int         handshake_wait; /* BlogHandshakeWait */
    int         conn_park;      /* BlogConnectionPark */

    apr_uint32_t set;           /* bit BLOG_D_x: given in this server */
    const char *file[BLOG_NDIRECTIVES];
    int         line[BLOG_NDIRECTIVES];
    blog_site  *site;           /* set by post_config */
} blog_config;

#define BLOG_SET(i) ((apr_uint32_t) 1 << (i))
typedef char blog_set_holds_every_directive[BLOG_NDIRECTIVES <= 32 ? 1 : -1];

/* Where directive i of c comes from: "file:line", or "default". */
const char *blog_where(apr_pool_t *p, const blog_config *c, int i);

/* The module record's: every directive's default, the merge, the table. */
void *blog_create_server_config(apr_pool_t *p, server_rec *s);
void *blog_merge_server_config(apr_pool_t *p, void *basev, void *addv);
extern const command_rec blog_cmds[];

#endif
