/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_template.c - libFuzzer target: any source either fails to compile
 * with a "name:line: " message, or renders the same bytes in one pass or two.
 * The input is a template, a NUL byte, then the source of partial "p".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/template.h"

enum
{ A, LIST, X, INNER, NFIELDS };

static const char *const fields[NFIELDS] = {"a", "list", "x", "inner"};

typedef struct arena
{
    void       *blocks[4096];
    int         n;
} arena;

static void *
arena_alloc(void *ctx, size_t size)
{
    arena *a = ctx;
    void *p;

    if (a->n == 4096)
        return NULL;
    p = malloc(size ? size : 1);
    if (p)
        a->blocks[a->n++] = p;
    return p;
}

typedef struct partial
{
    const char *src;
    size_t      len;
} partial;

static int
get_partial(void *ctx, const char *name, const char **src, size_t *len,
            const char **srcname, char *why, size_t whylen)
{
    const partial *p = ctx;

    (void) why;
    (void) whylen;
    if (strcmp(name, "p") != 0)
        return -1;
    *src = p->src;
    *len = p->len;
    *srcname = "p";
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static arena a;
    const char *src = (const char *) data;
    const char *nul = memchr(data, '\0', size);
    size_t len = nul ? (size_t) (nul - src) : size;
    partial p = {nul ? nul + 1 : "", nul ? size - len - 1 : 0};
    blog_tpl_env env = {fields, NFIELDS, arena_alloc, &a};
    blog_val inner_vals[1] = {{"<z>", 3, BLOG_VAL_STR}};
    blog_frame inner[2] = {{inner_vals, X, 1}, {inner_vals, X, 1}};
    blog_val item_vals[2][2] = {
        {{"1&", 2, BLOG_VAL_STR}, {inner, 2, BLOG_VAL_LIST}},
        {{"", 0, BLOG_VAL_STR}, {inner, 0, BLOG_VAL_LIST}},
    };
    blog_frame items[2] = {{item_vals[0], X, 2}, {item_vals[1], X, 2}};
    blog_val root_vals[NFIELDS] = {
        {"'a'", 3, BLOG_VAL_STR}, {items, 2, BLOG_VAL_LIST},
        {"root", 4, BLOG_VAL_STR}, {NULL, 0, BLOG_VAL_UNSET},
    };
    blog_frame root = {root_vals, 0, NFIELDS};
    char err[256];
    blog_tpl *tpl;
    int i;

    a.n = 0;
    tpl = blog_tpl_compile(&env, src, len, "f", get_partial, &p, err,
                           sizeof(err));
    if (tpl == NULL) {
        if (strchr(err, ':') == NULL)
            abort();
    } else {
        size_t n;
        char *out = blog_tpl_render(tpl, &root, arena_alloc, &a, 0, &n);

        /* one pass into a capacity the input picks, or two: the same bytes */
        if (out && len > 0) {
            size_t      cap = (size_t) (unsigned char) src[0] * n / 128;
            size_t      n2 = 0;
            char       *out2 = blog_tpl_render(tpl, &root, arena_alloc, &a,
                                               cap, &n2);

            if (out2 == NULL || n2 != n || memcmp(out, out2, n) != 0)
                abort();
        }
    }
    for (i = 0; i < a.n; i++)
        free(a.blocks[i]);
    return 0;
}
