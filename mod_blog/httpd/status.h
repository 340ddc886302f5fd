/* SPDX-License-Identifier: Apache-2.0 */
/* status.h - mod_blog's figures on /server-status. */
#ifndef BLOG_STATUS_H
#define BLOG_STATUS_H

void blog_status_register_hooks(void);

#endif
