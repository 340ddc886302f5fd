/* SPDX-License-Identifier: Apache-2.0 */
/* health.h - the blog-health handler, and its last failures for mod_status. */
#ifndef BLOG_HEALTH_H
#define BLOG_HEALTH_H

#include "httpd.h"

#define BLOG_HEALTH_WHY_MAX 600
/* The services it asks. */
#define BLOG_HEALTH_PG      0
#define BLOG_HEALTH_REDIS   1

/* This child's last failed check of which: 0 (at 0: none yet), or -1 when
 * it keeps none. */
int blog_health_last_failure(int which, char *why, apr_size_t len,
                             apr_time_t *at);

/* The handler and the lock of its records (child_init). */
void blog_health_register_hooks(void);

#endif
