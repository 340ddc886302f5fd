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
    BLOG_VAL_UNSET = 0,         /* not in this frame: look in the enclosing one */
    BLOG_VAL_STR,               /* ptr: bytes (not NUL-terminated), len: their count */
    BLOG_VAL_LIST               /* ptr: const blog_frame[len], one per item */
} blog_val_kind;

typedef struct blog_val
{
    const void *ptr;
    uint32_t    len;
    uint32_t    kind;           /* blog_val_kind */
} blog_val;

/*
 * A frame holds the values of the fields first .. first + count - 1.  The
 * root frame of a page usually covers every field; a list item covers the
 * contiguous range of its own fields.  A name is looked up from the
 * innermost frame outwards, as mustache does: a field outside a frame's
 * range, or UNSET in it, is looked up in the enclosing frame.  A value
 * that is a list renders nothing in {{name}}.
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
    const char *dir;                /* folder holding <name>.html files */
    const char *const *fields;      /* field names; the index is the field id */
    uint32_t    nfields;
    blog_alloc_fn alloc;
    void       *alloc_ctx;
} blog_tpl_env;

/*
 * Compile <dir>/<name>.html, with "{{> content}}" naming <dir>/<content>.html
 * (content may be NULL when the template uses no content partial), e.g.
 * blog_tpl_load(env, "layout", "post", ...) for the whole detail page.
 * Partial names may not start with '.' or hold '/'.  On error returns NULL
 * and writes "path:line: message" (or "path: reason" when the file itself
 * cannot be read) into err, truncated to errlen.
 */
blog_tpl *blog_tpl_load(const blog_tpl_env *env, const char *name,
                        const char *content, char *err, size_t errlen);

/*
 * Resolve a partial for blog_tpl_compile: set *src and *len (memory owned by
 * the caller, alive during the call) and return 0, or return -1 when unknown.
 */
typedef int (*blog_tpl_partial_fn) (void *ctx, const char *name,
                                    const char **src, size_t *len);

/* Compile from memory; srcname is used in error messages. */
blog_tpl *blog_tpl_compile(const blog_tpl_env *env, const char *src,
                           size_t len, const char *srcname,
                           blog_tpl_partial_fn partial, void *partial_ctx,
                           char *err, size_t errlen);

/* Exact size in bytes of the rendering of tpl with root (root may be NULL). */
size_t blog_tpl_size(const blog_tpl *tpl, const blog_frame *root);

/* Write the rendering at dst (blog_tpl_size bytes); returns its end. */
char *blog_tpl_write(const blog_tpl *tpl, const blog_frame *root, char *dst);

/* Both in one: one buffer of exactly *len bytes from alloc (NULL if it fails). */
char *blog_tpl_render(const blog_tpl *tpl, const blog_frame *root,
                      blog_alloc_fn alloc, void *alloc_ctx, size_t *len);

/*
 * The same bytes in one pass instead of two, when they fit in cap bytes
 * (the caller's guess, e.g. from the pages it rendered before): a buffer of
 * cap bytes holding *len of them.  When they do not (or cap is 0), that
 * buffer is left unused and blog_tpl_render's exact one is returned.
 */
char *blog_tpl_render_within(const blog_tpl *tpl, const blog_frame *root,
                             blog_alloc_fn alloc, void *alloc_ctx,
                             size_t cap, size_t *len);

#endif
