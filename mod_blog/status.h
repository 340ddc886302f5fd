/*
 * status.h - what an operator asks the server: mod_blog's figures on
 * mod_status's /server-status page (status.c) and the health check of
 * "SetHandler blog-health" (health.c).
 */
#ifndef BLOG_STATUS_H
#define BLOG_STATUS_H

#include "apr_time.h"

void blog_status_register_hooks(void);

/* The services the health check asks. */
#define BLOG_HEALTH_PG      0
#define BLOG_HEALTH_REDIS   1

/*
 * The reason this child's health check last found service `which` down,
 * and when (status.c shows it): 1, or 0 when it never did.
 */
int blog_health_last(int which, char *why, apr_size_t len, apr_time_t *at);
void blog_health_register_hooks(void);

#endif
