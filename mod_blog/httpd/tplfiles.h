/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tplfiles.h - the templates folder (BlogTemplates): a template named n is
 * the file <dir>/<n>.html, read once at start-up, the source core's
 * template compiler asks for.
 */
#ifndef BLOG_TPLFILES_H
#define BLOG_TPLFILES_H

#include "core/template.h"

typedef struct blog_tpl_files
{
    const char *dir;
    blog_alloc_fn alloc;        /* the files' bytes and names */
    void       *alloc_ctx;
} blog_tpl_files;

/* A blog_tpl_source_fn; ctx is a blog_tpl_files. */
int blog_tpl_file_source(void *ctx, const char *name, const char **src,
                         size_t *len, const char **srcname, char *why,
                         size_t whylen);

#endif
