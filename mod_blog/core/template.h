/* SPDX-License-Identifier: Apache-2.0 */
/*
 * template.h - a mustache subset (templates/README.md), compiled once with
 * names resolved to the caller's field ids, rendered into one buffer.  Pure
 * C; rendering only reads, so one template serves any number of threads.
 */
#ifndef BLOG_TEMPLATE_H
#define BLOG_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"

typedef enum blog_val_kind
{
    BLOG_VAL_UNSET = 0,         /* look in the enclosing frame */
    BLOG_VAL_STR,               /* ptr: len bytes, not NUL-terminated */
    BLOG_VAL_LIST               /* ptr: const blog_frame[len], one per item */
} blog_val_kind;

typedef struct blog_val
{
    const void *ptr;
    uint32_t    len;
    uint32_t    kind;           /* blog_val_kind */
} blog_val;

/* Fields first .. first + count - 1; lookups go from the innermost out. */
typedef struct blog_frame
{
    const blog_val *vals;
    uint32_t    first;
    uint32_t    count;
} blog_frame;

typedef struct blog_tpl blog_tpl;

typedef struct blog_tpl_env
{
    const char *const *fields;  /* field names; the index is the field id */
    uint32_t    nfields;
    blog_alloc_fn alloc;
    void       *alloc_ctx;
} blog_tpl_env;

/* A template's source by its name, alive through the compile: 0, or -1
 * with why.  The caller's: core reads no file. */
typedef int (*blog_tpl_source_fn) (void *ctx, const char *name,
                                   const char **src, size_t *len,
                                   const char **srcname, char *why,
                                   size_t whylen);

/* name's source, "{{> content}}" being content's (or none); NULL with
 * "file:line: message" in err. */
blog_tpl *blog_tpl_load(const blog_tpl_env *env, const char *name,
                        const char *content, blog_tpl_source_fn source,
                        void *source_ctx, char *err, size_t errlen);

/* Compile from memory; srcname is used in error messages. */
blog_tpl *blog_tpl_compile(const blog_tpl_env *env, const char *src,
                           size_t len, const char *srcname,
                           blog_tpl_source_fn partial, void *partial_ctx,
                           char *err, size_t errlen);

/* tpl with root (may be NULL), *len bytes from alloc: one pass if they fit
 * in cap, else sized first.  NULL when alloc fails. */
char *blog_tpl_render(const blog_tpl *tpl, const blog_frame *root,
                      blog_alloc_fn alloc, void *alloc_ctx, size_t cap,
                      size_t *len);

#endif
