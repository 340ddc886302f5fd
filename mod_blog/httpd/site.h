/* SPDX-License-Identifier: Apache-2.0 */
/* site.h - one server's BlogMount, resolved at start-up, then read-only. */
#ifndef BLOG_SITE_H
#define BLOG_SITE_H

#include <stdint.h>

#include "core/build.h"

typedef struct blog_site
{
    const blog_pageset *pages;  /* compiled from BlogTemplates */
    uint32_t    compute_limit;  /* BlogComputeLimit */
    const char *base;           /* the mount without its trailing slash */
    size_t      base_len;
    int         mounted;        /* BlogMount given for this server */
    int         shared;         /* BlogMount ... shared */
    int         fast_path;      /* BlogFastPath */
    apr_interval_time_t hold;   /* BlogConnectionHold; 0: Off */
    apr_uint32_t *fast_path_checked;    /* per child: the warning considered */
    blog_page   not_found;      /* rendered once, with the mount's links */
    blog_page   unavailable;
} blog_site;

#endif
