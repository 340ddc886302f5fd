/*
 * pageset.h - the six page templates of the blog, each wrapped in
 * layout.html, compiled once at start-up from BlogTemplates.
 */
#ifndef BLOG_PAGESET_H
#define BLOG_PAGESET_H

#include <stddef.h>

#include "template.h"

typedef struct blog_pageset
{
    const blog_tpl *index;
    const blog_tpl *post;
    const blog_tpl *tag;
    const blog_tpl *compute;
    const blog_tpl *not_found;
    const blog_tpl *unavailable;
} blog_pageset;

/* Compile every page of dir; NULL with "file:line: message" in err. */
const blog_pageset *blog_pageset_load(const char *dir, blog_alloc_fn alloc,
                                      void *alloc_ctx, char *err,
                                      size_t errlen);

#endif
