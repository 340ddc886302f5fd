/* pageset.c - loading the page templates. */
#include "pageset.h"

#include "fields.h"

const blog_pageset *
blog_pageset_load(const char *dir, blog_alloc_fn alloc, void *alloc_ctx,
                  char *err, size_t errlen)
{
    blog_pageset *t = alloc(alloc_ctx, sizeof(*t));
    blog_tpl_env env;

    if (t == NULL)
        return NULL;
    env.dir = dir;
    env.fields = blog_fields;
    env.nfields = F_COUNT;
    env.alloc = alloc;
    env.alloc_ctx = alloc_ctx;
    if (!(t->index = blog_tpl_load(&env, "layout", "index", err, errlen))
        || !(t->post = blog_tpl_load(&env, "layout", "post", err, errlen))
        || !(t->tag = blog_tpl_load(&env, "layout", "tag", err, errlen))
        || !(t->compute = blog_tpl_load(&env, "layout", "compute", err,
                                        errlen))
        || !(t->not_found = blog_tpl_load(&env, "layout", "not_found", err,
                                          errlen))
        || !(t->unavailable = blog_tpl_load(&env, "layout", "unavailable",
                                            err, errlen)))
        return NULL;
    return t;
}
