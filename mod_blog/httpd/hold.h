/* SPDX-License-Identifier: Apache-2.0 */
/* hold.h - a worker waits briefly for the next request after the blog's. */
#ifndef BLOG_HOLD_H
#define BLOG_HOLD_H

#include "httpd.h"

/* After r's answer, core's pipeline check waits up to hold (0: not). */
void blog_hold_arm(request_rec *r, apr_interval_time_t hold);
void blog_hold_register_hooks(void);

#endif
