/* SPDX-License-Identifier: Apache-2.0 */
/* invalidate_hooks.h - the invalidation listener's place in httpd's life. */
#ifndef BLOG_INVALIDATE_HOOKS_H
#define BLOG_INVALIDATE_HOOKS_H

/* The mutex (pre_config, post_config), the thread (child_init, stopping). */
void blog_invalidate_register_hooks(void);

#endif
