/* SPDX-License-Identifier: Apache-2.0 */
/* template.c - one array of ops on field ids: rendering never parses. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1          /* memmem */
#endif
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/escape.h"
#include "core/template.h"

/* Sections nested in sections; bounds both recursion and the frame stack. */
#define BLOG_TPL_MAX_DEPTH 16
#define BLOG_TPL_MAX_INCLUDE 16
#define BLOG_TPL_MAX_NAME 128

typedef enum blog_op_kind
{
    BLOG_OP_TEXT,               /* a: offset in text, b: length */
    BLOG_OP_VAR,                /* a: field id, escaped */
    BLOG_OP_RAW,                /* a: field id, as is */
    BLOG_OP_SECTION,            /* a: field id, b: index of the op after it */
    BLOG_OP_INVERTED            /* a: field id, b: index of the op after it */
} blog_op_kind;

typedef struct blog_op
{
    uint32_t    kind;
    uint32_t    a;
    uint32_t    b;
} blog_op;

struct blog_tpl
{
    const blog_op *ops;
    uint32_t    nops;
    const char *text;
};

/* ---- Compilation ---- */

/* A parsed tag: src[start .. end) is the whole tag, name its trimmed name. */
typedef struct blog_tag
{
    char        sigil;          /* 0 for a plain value, else # ^ / ! > & { */
    size_t      start;
    size_t      end;
    const char *name;
    size_t      namelen;
} blog_tag;

typedef struct blog_open_section
{
    uint32_t    op;             /* index of its SECTION/INVERTED op */
    blog_tag    tag;
} blog_open_section;

typedef struct blog_compiler
{
    const blog_tpl_env *env;
    blog_tpl_source_fn partial;
    void       *partial_ctx;
    char       *err;
    size_t      errlen;

    blog_op    *ops;
    uint32_t    nops;
    uint32_t    opcap;
    char       *text;
    size_t      ntext;
    size_t      textcap;
    int         text_open;      /* the last op is TEXT and may be extended */

    blog_open_section sections[BLOG_TPL_MAX_DEPTH];
    int         nsections;

    const char *includes[BLOG_TPL_MAX_INCLUDE];  /* srcnames being compiled */
    int         nincludes;
    const char *src;            /* the innermost one's source, for errors */
} blog_compiler;

static unsigned
tmpl_line_of(const char *src, size_t pos)
{
    unsigned line = 1;
    size_t i;

    for (i = 0; i < pos; i++) {
        if (src[i] == '\n')
            line++;
    }
    return line;
}

static void
tmpl_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int
tmpl_fail(blog_compiler *c, size_t pos, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tmpl_set_err(c->err, c->errlen, "%s:%u: %s", c->includes[c->nincludes - 1],
                 tmpl_line_of(c->src, pos), msg);
    return -1;
}

/* Doubling: what the allocator keeps behind is less than the last block. */
static void *
tmpl_grow(blog_compiler *c, void *old, size_t oldbytes, size_t newbytes)
{
    void *p = c->env->alloc(c->env->alloc_ctx, newbytes);

    if (p && oldbytes)
        memcpy(p, old, oldbytes);
    return p;
}

static int
tmpl_emit(blog_compiler *c, uint32_t kind, uint32_t a, uint32_t b)
{
    if (c->nops == c->opcap) {
        uint32_t cap = c->opcap ? c->opcap * 2 : 64;
        blog_op *ops = tmpl_grow(c, c->ops, c->nops * sizeof(blog_op),
                                 cap * sizeof(blog_op));

        if (ops == NULL)
            return -1;
        c->ops = ops;
        c->opcap = cap;
    }
    c->ops[c->nops++] = (blog_op) {kind, a, b};
    c->text_open = (kind == BLOG_OP_TEXT);
    return 0;
}

static int
tmpl_emit_text(blog_compiler *c, const char *s, size_t len)
{
    if (len == 0)
        return 0;
    if (c->ntext + len > UINT32_MAX)
        return -1;
    if (c->ntext + len > c->textcap) {
        size_t cap = c->textcap ? c->textcap * 2 : 4096;
        char *text;

        while (cap < c->ntext + len)
            cap *= 2;
        text = tmpl_grow(c, c->text, c->ntext, cap);
        if (text == NULL)
            return -1;
        c->text = text;
        c->textcap = cap;
    }
    memcpy(c->text + c->ntext, s, len);
    /* Adjacent runs (across tags that vanish, or partial edges) merge. */
    if (c->text_open)
        c->ops[c->nops - 1].b += (uint32_t) len;
    else if (tmpl_emit(c, BLOG_OP_TEXT, (uint32_t) c->ntext,
                       (uint32_t) len) < 0)
        return -1;
    c->ntext += len;
    return 0;
}

static int
tmpl_field_id(const blog_tpl_env *env, const char *name, size_t len)
{
    uint32_t i;

    for (i = 0; i < env->nfields; i++) {
        if (env->fields[i] && strlen(env->fields[i]) == len
            && memcmp(env->fields[i], name, len) == 0)
            return (int) i;
    }
    return -1;
}

static int
tmpl_is_space(char ch)
{
    return ch == ' ' || ch == '\t';
}

static int
tmpl_parse_tag(blog_compiler *c, const char *src, size_t len, size_t at,
               blog_tag *tag)
{
    size_t p = at + 2;
    const char *close;
    const char *end;
    size_t nb;
    size_t ne;
    size_t i;

    *tag = (blog_tag) {0, at, 0, NULL, 0};
    if (p < len && src[p] != '\0' && strchr("#^/!>&{=", src[p]))
        tag->sigil = src[p++];
    if (tag->sigil == '=')
        return tmpl_fail(c, at, "changing delimiters is not supported");
    close = tag->sigil == '{' ? "}}}" : "}}";
    end = memmem(src + p, len - p, close, strlen(close));
    if (end == NULL)
        return tmpl_fail(c, at, "unclosed tag (no '%s')", close);
    tag->end = (size_t) (end - src) + strlen(close);
    if (tag->sigil == '!')
        return 0;
    nb = p;
    ne = (size_t) (end - src);
    while (nb < ne && (tmpl_is_space(src[nb]) || src[nb] == '\n'))
        nb++;
    while (ne > nb && (tmpl_is_space(src[ne - 1]) || src[ne - 1] == '\n'))
        ne--;
    if (nb == ne)
        return tmpl_fail(c, at, "empty tag");
    if (ne - nb >= BLOG_TPL_MAX_NAME)
        return tmpl_fail(c, at, "name too long");
    for (i = nb; i < ne; i++) {
        if (tmpl_is_space(src[i]) || src[i] == '\n' || src[i] == '{'
            || src[i] == '}')
            return tmpl_fail(c, at, "malformed name '%.*s'", (int) (ne - nb),
                             src + nb);
    }
    tag->name = src + nb;
    tag->namelen = ne - nb;
    return 0;
}

/* A tag other than a value's alone on its line takes the line with it:
 * *line_start and *after move to the line's edges. */
static void
tmpl_standalone(const char *src, size_t len, size_t text_from,
                const blog_tag *tag, size_t *line_start, size_t *after)
{
    size_t b = tag->start;
    size_t e = tag->end;

    if (tag->sigil == 0 || tag->sigil == '&' || tag->sigil == '{')
        return;
    while (b > text_from && tmpl_is_space(src[b - 1]))
        b--;
    /* b stops at text_from when a tag precedes on the line: its last byte
     * is a brace, so the line is not standalone. */
    if (b != 0 && src[b - 1] != '\n')
        return;
    while (e < len && tmpl_is_space(src[e]))
        e++;
    if (e < len && src[e] == '\r' && e + 1 < len && src[e + 1] == '\n')
        e += 2;
    else if (e < len && src[e] == '\n')
        e++;
    else if (e != len)
        return;
    *line_start = b;
    *after = e;
}

static int tmpl_compile_source(blog_compiler *c, const char *src, size_t len,
                               const char *srcname);

static int
tmpl_compile_partial(blog_compiler *c, const blog_tag *tag)
{
    char name[BLOG_TPL_MAX_NAME];
    char why[256] = "";
    const char *psrc;
    const char *pname;
    size_t plen;
    int i;

    memcpy(name, tag->name, tag->namelen);
    name[tag->namelen] = '\0';
    if (c->nincludes == BLOG_TPL_MAX_INCLUDE)
        return tmpl_fail(c, tag->start, "partials nested deeper than %d",
                         BLOG_TPL_MAX_INCLUDE);
    if (c->partial == NULL
        || c->partial(c->partial_ctx, name, &psrc, &plen, &pname, why,
                      sizeof(why)) < 0)
        return tmpl_fail(c, tag->start, "partial '%s' not found%s%s", name,
                         why[0] ? ": " : "", why);
    for (i = 0; i < c->nincludes; i++) {
        if (strcmp(c->includes[i], pname) == 0)
            return tmpl_fail(c, tag->start,
                             "partial cycle: '%s' includes itself", name);
    }
    return tmpl_compile_source(c, psrc, plen, pname);
}

static int
tmpl_close(blog_compiler *c, const blog_tag *tag, int base)
{
    blog_open_section *s;

    if (c->nsections == base)
        return tmpl_fail(c, tag->start, "'{{/%.*s}}' closes no open section",
                         (int) tag->namelen, tag->name);
    s = &c->sections[c->nsections - 1];
    if (s->tag.namelen != tag->namelen
        || memcmp(s->tag.name, tag->name, tag->namelen) != 0)
        return tmpl_fail(c, tag->start,
                         "'{{/%.*s}}' closes '%.*s' opened at line %u",
                         (int) tag->namelen, tag->name, (int) s->tag.namelen,
                         s->tag.name, tmpl_line_of(c->src, s->tag.start));
    c->ops[s->op].b = c->nops;
    c->nsections--;
    c->text_open = 0;           /* text after a section is not its body */
    return 0;
}

static int
tmpl_compile_tag(blog_compiler *c, const blog_tag *tag, int base)
{
    int field;

    if (tag->sigil == '!')
        return 0;
    if (tag->sigil == '>')
        return tmpl_compile_partial(c, tag);
    if (tag->sigil == '/')
        return tmpl_close(c, tag, base);
    field = tmpl_field_id(c->env, tag->name, tag->namelen);
    if (field < 0)
        return tmpl_fail(c, tag->start, "unknown name '%.*s'",
                         (int) tag->namelen, tag->name);
    if (tag->sigil == '#' || tag->sigil == '^') {
        if (c->nsections == BLOG_TPL_MAX_DEPTH)
            return tmpl_fail(c, tag->start, "sections nested deeper than %d",
                             BLOG_TPL_MAX_DEPTH);
        c->sections[c->nsections++] = (blog_open_section) {c->nops, *tag};
    }
    return tmpl_emit(c, tag->sigil == '#' ? BLOG_OP_SECTION
                     : tag->sigil == '^' ? BLOG_OP_INVERTED
                     : tag->sigil == 0 ? BLOG_OP_VAR : BLOG_OP_RAW,
                     (uint32_t) field, 0);
}

static int
tmpl_compile_source(blog_compiler *c, const char *src, size_t len,
                    const char *srcname)
{
    int base = c->nsections;    /* sections must close in their own file */
    size_t text_from = 0;
    const char *open;

    c->includes[c->nincludes++] = srcname;
    while ((open = memmem(src + text_from, len - text_from, "{{", 2))) {
        size_t at = (size_t) (open - src);
        size_t keep_to;
        size_t next;
        blog_tag tag;

        c->src = src;           /* again, after a partial */
        if (tmpl_parse_tag(c, src, len, at, &tag) < 0)
            return -1;
        keep_to = tag.start;
        next = tag.end;
        tmpl_standalone(src, len, text_from, &tag, &keep_to, &next);
        if (tmpl_emit_text(c, src + text_from, keep_to - text_from) < 0)
            return tmpl_fail(c, at, "out of memory");
        if (tmpl_compile_tag(c, &tag, base) < 0)
            return -1;
        text_from = next;
    }
    c->src = src;
    if (tmpl_emit_text(c, src + text_from, len - text_from) < 0)
        return tmpl_fail(c, len, "out of memory");
    if (c->nsections > base) {
        blog_open_section *s = &c->sections[c->nsections - 1];

        return tmpl_fail(c, s->tag.start, "unclosed section '%.*s'",
                         (int) s->tag.namelen, s->tag.name);
    }
    c->nincludes--;
    return 0;
}

blog_tpl *
blog_tpl_compile(const blog_tpl_env *env, const char *src, size_t len,
                 const char *srcname, blog_tpl_source_fn partial,
                 void *partial_ctx, char *err, size_t errlen)
{
    blog_compiler c = {.env = env, .partial = partial,
        .partial_ctx = partial_ctx, .err = err, .errlen = errlen};
    blog_tpl   *tpl = NULL;

    tmpl_set_err(err, errlen, "%s", "");
    if (tmpl_compile_source(&c, src, len, srcname) == 0)
        tpl = env->alloc(env->alloc_ctx, sizeof(*tpl));
    if (tpl == NULL) {
        /* only allocation failures come back without a message */
        if (err && errlen && err[0] == '\0')
            tmpl_set_err(err, errlen, "%s: out of memory", srcname);
        return NULL;
    }
    *tpl = (blog_tpl) {c.ops, c.nops, c.text};
    return tpl;
}

/* ---- Loading by name ---- */

/* The sources of blog_tpl_load: the caller's, "content" being the page. */
typedef struct tmpl_named
{
    blog_tpl_source_fn source;
    void       *ctx;
    const char *content;
} tmpl_named;

static int
tmpl_named_source(void *ctx, const char *name, const char **src, size_t *len,
                  const char **srcname, char *why, size_t whylen)
{
    tmpl_named *n = ctx;

    if (strcmp(name, "content") == 0 && (name = n->content) == NULL) {
        tmpl_set_err(why, whylen, "this template wraps no page");
        return -1;
    }
    return n->source(n->ctx, name, src, len, srcname, why, whylen);
}

blog_tpl *
blog_tpl_load(const blog_tpl_env *env, const char *name, const char *content,
              blog_tpl_source_fn source, void *source_ctx, char *err,
              size_t errlen)
{
    tmpl_named  n = {source, source_ctx, content};
    const char *src;
    const char *srcname;
    size_t      len;

    if (tmpl_named_source(&n, name, &src, &len, &srcname, err, errlen) < 0)
        return NULL;
    return blog_tpl_compile(env, src, len, srcname, tmpl_named_source, &n,
                            err, errlen);
}

/* ---- Rendering ---- */

/* The frames in scope, innermost last; list sections push one each. */
typedef struct blog_scope
{
    const blog_frame *frames[BLOG_TPL_MAX_DEPTH + 1];
    int         n;
} blog_scope;

static const blog_val *
tmpl_lookup(const blog_scope *sc, uint32_t field)
{
    int i;

    for (i = sc->n - 1; i >= 0; i--) {
        const blog_frame *f = sc->frames[i];
        uint32_t rel = field - f->first;    /* wraps when field < first */

        if (rel < f->count && f->vals[rel].kind != BLOG_VAL_UNSET)
            return &f->vals[rel];
    }
    return NULL;
}

/* The escaping of a byte is at most this long ("&amp;", "&#34;", "&#39;"). */
#define BLOG_ESCAPE_GROWTH 5
#define BLOG_NO_ROOM SIZE_MAX

/* s[0..len) after the first n bytes, counted (dst NULL) or written. */
static size_t
tmpl_put(char *dst, size_t cap, size_t n, const char *s, size_t len)
{
    if (dst == NULL)
        return n + len;
    if (len > cap - n)
        return BLOG_NO_ROOM;
    memcpy(dst + n, s, len);
    return n + len;
}

/*
 * Ops [from, to) after the first n bytes, counted (dst NULL) or written in
 * cap bytes: the new n, or BLOG_NO_ROOM.  One walker for both keeps the
 * size and the bytes from ever disagreeing.
 */
static size_t
tmpl_render_ops(const blog_tpl *tpl, uint32_t from, uint32_t to,
                blog_scope *sc, char *dst, size_t cap, size_t n)
{
    uint32_t i = from;

    while (i < to && n != BLOG_NO_ROOM) {
        const blog_op *op = &tpl->ops[i++];
        const blog_val *v = op->kind == BLOG_OP_TEXT ? NULL
            : tmpl_lookup(sc, op->a);
        int         str = v != NULL && v->kind == BLOG_VAL_STR;
        int         empty = v == NULL || v->len == 0;

        switch (op->kind) {
        case BLOG_OP_TEXT:
            n = tmpl_put(dst, cap, n, tpl->text + op->a, op->b);
            break;
        case BLOG_OP_RAW:
            if (str)
                n = tmpl_put(dst, cap, n, v->ptr, v->len);
            break;
        case BLOG_OP_VAR:
            if (!str)
                break;
            if (dst == NULL)
                n += blog_escaped_len(v->ptr, v->len);
            /* the exact length only when the worst case may not fit */
            else if (v->len > (cap - n) / BLOG_ESCAPE_GROWTH
                     && blog_escaped_len(v->ptr, v->len) > cap - n)
                n = BLOG_NO_ROOM;
            else
                n = (size_t) (blog_escape(dst + n, v->ptr, v->len) - dst);
            break;
        default:                /* BLOG_OP_SECTION, BLOG_OP_INVERTED */
            if (op->kind == BLOG_OP_SECTION && !empty
                && v->kind == BLOG_VAL_LIST) {
                const blog_frame *items = v->ptr;
                uint32_t k;

                for (k = 0; k < v->len && n != BLOG_NO_ROOM; k++) {
                    sc->frames[sc->n++] = &items[k];
                    n = tmpl_render_ops(tpl, i, op->b, sc, dst, cap, n);
                    sc->n--;
                }
            }
            else if (empty == (op->kind == BLOG_OP_INVERTED))
                n = tmpl_render_ops(tpl, i, op->b, sc, dst, cap, n);
            i = op->b;
            break;
        }
    }
    return n;
}

char *
blog_tpl_render(const blog_tpl *tpl, const blog_frame *root,
                blog_alloc_fn alloc, void *alloc_ctx, size_t cap, size_t *len)
{
    blog_scope  sc = {{root}, root != NULL};
    char       *buf = cap > 0 ? alloc(alloc_ctx, cap) : NULL;
    size_t      n = buf ? tmpl_render_ops(tpl, 0, tpl->nops, &sc, buf, cap, 0)
        : BLOG_NO_ROOM;

    /* sized exactly, then written: the walker leaves sc as it found it */
    if (n == BLOG_NO_ROOM) {
        n = tmpl_render_ops(tpl, 0, tpl->nops, &sc, NULL, 0, 0);
        buf = alloc(alloc_ctx, n ? n : 1);
        if (buf == NULL)
            return NULL;
        tmpl_render_ops(tpl, 0, tpl->nops, &sc, buf, n, 0);
    }
    *len = n;
    return buf;
}
