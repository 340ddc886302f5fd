/* SPDX-License-Identifier: Apache-2.0 */
/* urls.h - which URLs are the blog's, and the hooks that answer them. */
#ifndef BLOG_URLS_H
#define BLOG_URLS_H

/* quick_handler, translate_name, map_to_storage and the handler "blog". */
void blog_urls_register_hooks(void);

#endif
