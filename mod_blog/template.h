/*
 * template.h - a mustache subset (templates/README.md), compiled once at
 * start-up into ops with names resolved to the caller's field ids, and
 * rendered per request into one buffer.  Errors read "file:line: message".
 * Pure C, no APR: memory comes from the caller's allocator and is never
 * freed here; rendering only reads the template and the frames, so one
 * template serves any number of threads.
 */
#ifndef BLOG_TEMPLATE_H
#define BLOG_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"

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

/*
 * The values of fields first .. first + count - 1.  A name is looked up
 * from the innermost frame outwards, as mustache does.
 */
typedef struct blog_frame
{
    const blog_val *vals;
    uint32_t    first;
    uint32_t    count;
} blog_frame;

typedef struct blog_tpl blog_tpl;

typedef struct blog_tpl_env
{
    const char *dir;            /* folder of the <name>.html files */
    const char *const *fields;  /* field names; the index is the field id */
    uint32_t    nfields;
    blog_alloc_fn alloc;
    void       *alloc_ctx;
} blog_tpl_env;

/*
 * Compile <dir>/<name>.html, "{{> content}}" being <dir>/<content>.html
 * (content may be NULL).  NULL, with the error in err.
 */
blog_tpl *blog_tpl_load(const blog_tpl_env *env, const char *name,
                        const char *content, char *err, size_t errlen);

/*
 * A partial's source: 0 with *src, *len and *srcname (its name in error
 * messages and cycles) alive until the compile returns; or -1 (with why).
 */
typedef int (*blog_tpl_partial_fn) (void *ctx, const char *name,
                                    const char **src, size_t *len,
                                    const char **srcname, char *why,
                                    size_t whylen);

/* Compile from memory; srcname is used in error messages. */
blog_tpl *blog_tpl_compile(const blog_tpl_env *env, const char *src,
                           size_t len, const char *srcname,
                           blog_tpl_partial_fn partial, void *partial_ctx,
                           char *err, size_t errlen);

/*
 * The rendering of tpl with root (may be NULL) in one buffer from alloc,
 * *len bytes: in one pass when they fit in cap bytes (the caller's guess),
 * otherwise sized exactly first.  NULL when alloc fails.
 */
char *blog_tpl_render(const blog_tpl *tpl, const blog_frame *root,
                      blog_alloc_fn alloc, void *alloc_ctx, size_t cap,
                      size_t *len);

#endif
