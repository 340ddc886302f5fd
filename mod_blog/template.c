/*
 * template.c - the mustache subset of template.h.
 *
 * Compiling flattens a template and every partial it names into one array
 * of ops (text runs, values, sections), with names already turned into
 * field ids, so that rendering is a loop over that array: no parsing, no
 * string comparison, no allocation but the output buffer.  Rendering runs
 * twice over the ops, once to size the page exactly and once to write it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "template.h"

/* Sections nested in sections; bounds both recursion and the frame stack. */
#define BLOG_TPL_MAX_DEPTH 16
/* Partials inside partials (a cycle is caught earlier, this bounds chains). */
#define BLOG_TPL_MAX_INCLUDE 16
#define BLOG_TPL_MAX_NAME 128
#define BLOG_TPL_MAX_FILE (1024 * 1024)

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

/*
 * How the compiler finds a partial: src/len/srcname stay valid for the
 * whole compilation.  Returns 0, or -1 with a reason in why.
 */
typedef int (*blog_resolve_fn) (void *ctx, const char *name,
                                const char **src, size_t *len,
                                const char **srcname,
                                char *why, size_t whylen);

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
    blog_resolve_fn resolve;
    void       *resolve_ctx;
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

    const char *includes[BLOG_TPL_MAX_INCLUDE];  /* partials being compiled */
    int         nincludes;
} blog_compiler;

static unsigned
blog_line_of(const char *src, size_t pos)
{
    unsigned line = 1;
    size_t i;

    for (i = 0; i < pos; i++)
        if (src[i] == '\n')
            line++;
    return line;
}

static int
blog_fail(blog_compiler *c, const char *srcname, const char *src, size_t pos,
          const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (c->err && c->errlen)
        snprintf(c->err, c->errlen, "%s:%u: %s", srcname,
                 blog_line_of(src, pos), msg);
    return -1;
}

static void
blog_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Grows by doubling from the caller's allocator, which never frees: the
 * abandoned blocks add up to less than the final one. */
static void *
blog_grow(blog_compiler *c, void *old, size_t oldbytes, size_t newbytes)
{
    void *p = c->env->alloc(c->env->alloc_ctx, newbytes);

    if (p && oldbytes)
        memcpy(p, old, oldbytes);
    return p;
}

static int
blog_emit(blog_compiler *c, uint32_t kind, uint32_t a, uint32_t b)
{
    if (c->nops == c->opcap) {
        uint32_t cap = c->opcap ? c->opcap * 2 : 64;
        blog_op *ops = blog_grow(c, c->ops, c->nops * sizeof(blog_op),
                                 cap * sizeof(blog_op));

        if (ops == NULL)
            return -1;
        c->ops = ops;
        c->opcap = cap;
    }
    c->ops[c->nops].kind = kind;
    c->ops[c->nops].a = a;
    c->ops[c->nops].b = b;
    c->nops++;
    c->text_open = (kind == BLOG_OP_TEXT);
    return 0;
}

static int
blog_emit_text(blog_compiler *c, const char *s, size_t len)
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
        text = blog_grow(c, c->text, c->ntext, cap);
        if (text == NULL)
            return -1;
        c->text = text;
        c->textcap = cap;
    }
    memcpy(c->text + c->ntext, s, len);
    /* Adjacent runs (across tags that vanish, or partial edges) merge. */
    if (c->text_open)
        c->ops[c->nops - 1].b += (uint32_t) len;
    else if (blog_emit(c, BLOG_OP_TEXT, (uint32_t) c->ntext,
                       (uint32_t) len) < 0)
        return -1;
    c->ntext += len;
    return 0;
}

static int
blog_field_id(const blog_tpl_env *env, const char *name, size_t len)
{
    uint32_t i;

    for (i = 0; i < env->nfields; i++)
        if (env->fields[i] && strlen(env->fields[i]) == len
            && memcmp(env->fields[i], name, len) == 0)
            return (int) i;
    return -1;
}

static int
blog_is_space(char ch)
{
    return ch == ' ' || ch == '\t';
}

static int
blog_parse_tag(blog_compiler *c, const char *src, size_t len, size_t at,
               const char *srcname, blog_tag *tag)
{
    size_t p = at + 2;
    const char *close = "}}";
    size_t closelen = 2;
    size_t i;
    size_t nb;
    size_t ne;

    tag->start = at;
    tag->end = at;
    tag->sigil = 0;
    tag->name = NULL;
    tag->namelen = 0;
    if (p < len && src[p] != '\0' && strchr("#^/!>&{=", src[p])) {
        tag->sigil = src[p];
        p++;
    }
    if (tag->sigil == '=')
        return blog_fail(c, srcname, src, at,
                         "changing delimiters is not supported");
    if (tag->sigil == '{') {
        close = "}}}";
        closelen = 3;
    }
    for (i = p; i + closelen <= len; i++)
        if (memcmp(src + i, close, closelen) == 0)
            break;
    if (i + closelen > len)
        return blog_fail(c, srcname, src, at, "unclosed tag (no '%s')", close);
    tag->end = i + closelen;
    if (tag->sigil == '!')
        return 0;
    nb = p;
    ne = i;
    while (nb < ne && (blog_is_space(src[nb]) || src[nb] == '\n'))
        nb++;
    while (ne > nb && (blog_is_space(src[ne - 1]) || src[ne - 1] == '\n'))
        ne--;
    if (nb == ne)
        return blog_fail(c, srcname, src, at, "empty tag");
    if (ne - nb >= BLOG_TPL_MAX_NAME)
        return blog_fail(c, srcname, src, at, "name too long");
    for (i = nb; i < ne; i++)
        if (blog_is_space(src[i]) || src[i] == '\n' || src[i] == '{'
            || src[i] == '}')
            return blog_fail(c, srcname, src, at, "malformed name '%.*s'",
                             (int) (ne - nb), src + nb);
    tag->name = src + nb;
    tag->namelen = ne - nb;
    return 0;
}

/*
 * A section, inverted, closing, comment or partial tag alone on its line
 * (only spaces or tabs around it) takes the whole line with it.  Sets
 * *line_start (where the line's kept text ends) and *after (where the
 * next text begins).
 */
static int
blog_standalone(const char *src, size_t len, size_t text_from,
                const blog_tag *tag, size_t *line_start, size_t *after)
{
    size_t b = tag->start;
    size_t e = tag->end;

    if (tag->sigil == 0 || tag->sigil == '&' || tag->sigil == '{')
        return 0;
    while (b > text_from && blog_is_space(src[b - 1]))
        b--;
    /* b stops at text_from when a tag precedes on the line: its last byte
     * is a brace, so the line is not standalone. */
    if (b != 0 && src[b - 1] != '\n')
        return 0;
    while (e < len && blog_is_space(src[e]))
        e++;
    if (e < len && src[e] == '\r' && e + 1 < len && src[e + 1] == '\n')
        e += 2;
    else if (e < len && src[e] == '\n')
        e++;
    else if (e != len)
        return 0;
    *line_start = b;
    *after = e;
    return 1;
}

/* The next "{{" in s[0..len), or NULL. */
static const char *
blog_find_open(const char *s, size_t len)
{
    const char *end = s + len;

    while (len >= 2) {
        const char *p = memchr(s, '{', len - 1);

        if (p == NULL)
            return NULL;
        if (p[1] == '{')
            return p;
        s = p + 1;
        len = (size_t) (end - s);
    }
    return NULL;
}

static int blog_compile_source(blog_compiler *c, const char *src, size_t len,
                               const char *srcname);

static int
blog_compile_partial(blog_compiler *c, const char *src, size_t pos,
                     const char *srcname, const blog_tag *tag)
{
    char name[BLOG_TPL_MAX_NAME];
    char why[256] = "";
    const char *psrc;
    size_t plen;
    const char *pname;
    int i;
    int rc;

    memcpy(name, tag->name, tag->namelen);
    name[tag->namelen] = '\0';
    for (i = 0; i < c->nincludes; i++)
        if (strcmp(c->includes[i], name) == 0)
            return blog_fail(c, srcname, src, pos,
                             "partial cycle: '%s' includes itself", name);
    if (c->nincludes == BLOG_TPL_MAX_INCLUDE)
        return blog_fail(c, srcname, src, pos,
                         "partials nested deeper than %d",
                         BLOG_TPL_MAX_INCLUDE);
    if (c->resolve == NULL
        || c->resolve(c->resolve_ctx, name, &psrc, &plen, &pname,
                      why, sizeof(why)) < 0)
        return blog_fail(c, srcname, src, pos, "partial '%s' not found%s%s",
                         name, why[0] ? ": " : "", why);
    /* name stays on this stack frame while the partial compiles */
    c->includes[c->nincludes++] = name;
    rc = blog_compile_source(c, psrc, plen, pname);
    c->nincludes--;
    return rc;
}

static int
blog_close(blog_compiler *c, const char *src, const char *srcname,
           const blog_tag *tag, int base)
{
    blog_open_section *s;

    if (c->nsections == base)
        return blog_fail(c, srcname, src, tag->start,
                         "'{{/%.*s}}' closes no open section",
                         (int) tag->namelen, tag->name);
    s = &c->sections[c->nsections - 1];
    if (s->tag.namelen != tag->namelen
        || memcmp(s->tag.name, tag->name, tag->namelen) != 0)
        return blog_fail(c, srcname, src, tag->start,
                         "'{{/%.*s}}' closes '%.*s' opened at line %u",
                         (int) tag->namelen, tag->name,
                         (int) s->tag.namelen, s->tag.name,
                         blog_line_of(src, s->tag.start));
    c->ops[s->op].b = c->nops;
    c->nsections--;
    c->text_open = 0;           /* text after a section is not its body */
    return 0;
}

static int
blog_compile_tag(blog_compiler *c, const char *src, const char *srcname,
                 const blog_tag *tag, int base)
{
    int field;

    if (tag->sigil == '!')
        return 0;
    if (tag->sigil == '>')
        return blog_compile_partial(c, src, tag->start, srcname, tag);
    if (tag->sigil == '/')
        return blog_close(c, src, srcname, tag, base);
    field = blog_field_id(c->env, tag->name, tag->namelen);
    if (field < 0)
        return blog_fail(c, srcname, src, tag->start, "unknown name '%.*s'",
                         (int) tag->namelen, tag->name);
    if (tag->sigil == '#' || tag->sigil == '^') {
        if (c->nsections == BLOG_TPL_MAX_DEPTH)
            return blog_fail(c, srcname, src, tag->start,
                             "sections nested deeper than %d",
                             BLOG_TPL_MAX_DEPTH);
        c->sections[c->nsections].op = c->nops;
        c->sections[c->nsections++].tag = *tag;
    }
    return blog_emit(c, tag->sigil == '#' ? BLOG_OP_SECTION
                     : tag->sigil == '^' ? BLOG_OP_INVERTED
                     : tag->sigil == 0 ? BLOG_OP_VAR : BLOG_OP_RAW,
                     (uint32_t) field, 0);
}

static int
blog_compile_source(blog_compiler *c, const char *src, size_t len,
                    const char *srcname)
{
    int base = c->nsections;    /* sections must close in their own file */
    size_t text_from = 0;

    for (;;) {
        const char *open = NULL;
        size_t at;
        size_t keep_to;
        size_t next;
        blog_tag tag;

        if (text_from < len)
            open = blog_find_open(src + text_from, len - text_from);
        if (open == NULL)
            break;
        at = (size_t) (open - src);
        if (blog_parse_tag(c, src, len, at, srcname, &tag) < 0)
            return -1;
        keep_to = tag.start;
        next = tag.end;
        blog_standalone(src, len, text_from, &tag, &keep_to, &next);
        if (blog_emit_text(c, src + text_from, keep_to - text_from) < 0)
            return blog_fail(c, srcname, src, at, "out of memory");
        if (blog_compile_tag(c, src, srcname, &tag, base) < 0)
            return -1;
        text_from = next;
    }
    if (blog_emit_text(c, src + text_from, len - text_from) < 0)
        return blog_fail(c, srcname, src, len, "out of memory");
    if (c->nsections > base) {
        blog_open_section *s = &c->sections[c->nsections - 1];

        return blog_fail(c, srcname, src, s->tag.start,
                         "unclosed section '%.*s'", (int) s->tag.namelen,
                         s->tag.name);
    }
    return 0;
}

static blog_tpl *
blog_compile(const blog_tpl_env *env, const char *src, size_t len,
             const char *srcname, const char *root_name,
             blog_resolve_fn resolve, void *resolve_ctx, char *err,
             size_t errlen)
{
    blog_compiler c;
    blog_tpl *tpl;

    if (err && errlen)
        err[0] = '\0';
    memset(&c, 0, sizeof(c));
    c.env = env;
    c.resolve = resolve;
    c.resolve_ctx = resolve_ctx;
    c.err = err;
    c.errlen = errlen;
    if (root_name)
        c.includes[c.nincludes++] = root_name;
    if (blog_compile_source(&c, src, len, srcname) < 0) {
        /* only allocation failures come back without a message */
        if (err && errlen && err[0] == '\0')
            blog_set_err(err, errlen, "%s: out of memory", srcname);
        return NULL;
    }
    tpl = env->alloc(env->alloc_ctx, sizeof(*tpl));
    if (tpl == NULL) {
        blog_set_err(err, errlen, "%s: out of memory", srcname);
        return NULL;
    }
    tpl->ops = c.ops;
    tpl->nops = c.nops;
    tpl->text = c.text;
    return tpl;
}

/* blog_tpl_compile's partials come from the caller's callback. */
typedef struct blog_user_resolver
{
    blog_tpl_partial_fn fn;
    void       *ctx;
} blog_user_resolver;

static int
blog_user_resolve(void *ctx, const char *name, const char **src, size_t *len,
                  const char **srcname, char *why, size_t whylen)
{
    blog_user_resolver *r = ctx;

    (void) why;
    (void) whylen;
    if (r->fn == NULL || r->fn(r->ctx, name, src, len) < 0)
        return -1;
    /* the partial's name stands for its source in error messages */
    *srcname = name;
    return 0;
}

blog_tpl *
blog_tpl_compile(const blog_tpl_env *env, const char *src, size_t len,
                 const char *srcname, blog_tpl_partial_fn partial,
                 void *partial_ctx, char *err, size_t errlen)
{
    blog_user_resolver r;

    r.fn = partial;
    r.ctx = partial_ctx;
    return blog_compile(env, src, len, srcname, NULL, blog_user_resolve, &r,
                        err, errlen);
}

/* ---- Loading from files ---- */

typedef struct blog_file_resolver
{
    const blog_tpl_env *env;
    const char *content;
} blog_file_resolver;

static char *
blog_strcat3(const blog_tpl_env *env, const char *a, const char *b,
             const char *c)
{
    size_t la = strlen(a);
    size_t lb = strlen(b);
    size_t lc = strlen(c);
    char *s = env->alloc(env->alloc_ctx, la + lb + lc + 1);

    if (s == NULL)
        return NULL;
    memcpy(s, a, la);
    memcpy(s + la, b, lb);
    memcpy(s + la + lb, c, lc + 1);
    return s;
}

/* Reads a whole file into memory from env's allocator; -1 sets errno. */
static int
blog_read_file(const blog_tpl_env *env, const char *path, char **data,
               size_t *len)
{
    struct stat st;
    size_t got = 0;
    char *buf;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0) {
        int e = errno;

        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > BLOG_TPL_MAX_FILE) {
        close(fd);
        errno = S_ISDIR(st.st_mode) ? EISDIR
            : S_ISREG(st.st_mode) ? EFBIG : EINVAL;
        return -1;
    }
    buf = env->alloc(env->alloc_ctx, (size_t) st.st_size + 1);
    if (buf == NULL) {
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    while (got < (size_t) st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t) st.st_size - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t) n;
    }
    close(fd);
    buf[got] = '\0';
    *data = buf;
    *len = got;
    return 0;
}

static int
blog_name_is_safe(const char *name)
{
    /* a partial name never leaves the templates folder */
    return name[0] != '\0' && name[0] != '.' && strchr(name, '/') == NULL;
}

static int
blog_file_resolve(void *ctx, const char *name, const char **src, size_t *len,
                  const char **srcname, char *why, size_t whylen)
{
    blog_file_resolver *r = ctx;
    const char *file = name;
    char *path;
    char *data;

    if (strcmp(name, "content") == 0) {
        if (r->content == NULL) {
            blog_set_err(why, whylen, "this template wraps no page");
            return -1;
        }
        file = r->content;
    }
    if (!blog_name_is_safe(file)) {
        blog_set_err(why, whylen, "invalid file name");
        return -1;
    }
    path = blog_strcat3(r->env, r->env->dir, "/", file);
    if (path)
        path = blog_strcat3(r->env, path, ".html", "");
    if (path == NULL) {
        blog_set_err(why, whylen, "out of memory");
        return -1;
    }
    if (blog_read_file(r->env, path, &data, len) < 0) {
        blog_set_err(why, whylen, "%s: %s", path, strerror(errno));
        return -1;
    }
    *src = data;
    *srcname = path;
    return 0;
}

blog_tpl *
blog_tpl_load(const blog_tpl_env *env, const char *name, const char *content,
              char *err, size_t errlen)
{
    blog_file_resolver r;
    const char *src;
    const char *path;
    size_t len;
    char why[512];

    r.env = env;
    r.content = content;
    if (blog_file_resolve(&r, name, &src, &len, &path, why, sizeof(why)) < 0) {
        blog_set_err(err, errlen, "%s", why);
        return NULL;
    }
    return blog_compile(env, src, len, path, name, blog_file_resolve, &r,
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
blog_lookup(const blog_scope *sc, uint32_t field)
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

static int
blog_is_empty(const blog_val *v)
{
    return v == NULL || v->len == 0
        || (v->kind != BLOG_VAL_STR && v->kind != BLOG_VAL_LIST);
}

/* The escaping of a byte is at most this long ("&amp;", "&#34;", "&#39;"). */
#define BLOG_ESCAPE_GROWTH 5

/* What the walker returns once a byte would not fit. */
#define BLOG_NO_ROOM SIZE_MAX

/*
 * Walk ops [from, to), the first n bytes of the rendering being done: with
 * dst NULL only count the bytes, otherwise also write them at dst, which
 * holds cap bytes.  Returns the new n, or BLOG_NO_ROOM as soon as a byte
 * would not fit.  One walker for counting and writing keeps the size and
 * the bytes from ever disagreeing; n is passed by value so that it stays in
 * a register across the copies.
 */
static size_t
blog_render_ops(const blog_tpl *tpl, uint32_t from, uint32_t to,
                blog_scope *sc, char *dst, size_t cap, size_t n)
{
    uint32_t i = from;

    while (i < to) {
        const blog_op *op = &tpl->ops[i];
        const blog_val *v;

        switch (op->kind) {
        case BLOG_OP_TEXT:
            if (dst) {
                if (op->b > cap - n)
                    return BLOG_NO_ROOM;
                memcpy(dst + n, tpl->text + op->a, op->b);
            }
            n += op->b;
            i++;
            break;
        case BLOG_OP_VAR:
            v = blog_lookup(sc, op->a);
            if (v && v->kind == BLOG_VAL_STR) {
                if (dst == NULL)
                    n += blog_escaped_len(v->ptr, v->len);
                /* the exact length only when the worst case may not fit */
                else if (v->len > (cap - n) / BLOG_ESCAPE_GROWTH
                         && blog_escaped_len(v->ptr, v->len) > cap - n)
                    return BLOG_NO_ROOM;
                else
                    n = (size_t) (blog_escape(dst + n, v->ptr, v->len) - dst);
            }
            i++;
            break;
        case BLOG_OP_RAW:
            v = blog_lookup(sc, op->a);
            if (v && v->kind == BLOG_VAL_STR) {
                if (dst) {
                    if (v->len > cap - n)
                        return BLOG_NO_ROOM;
                    memcpy(dst + n, v->ptr, v->len);
                }
                n += v->len;
            }
            i++;
            break;
        case BLOG_OP_SECTION:
            v = blog_lookup(sc, op->a);
            if (blog_is_empty(v)) {
                /* nothing */
            } else if (v->kind == BLOG_VAL_LIST) {
                const blog_frame *items = v->ptr;
                uint32_t k;

                for (k = 0; k < v->len && n != BLOG_NO_ROOM; k++) {
                    sc->frames[sc->n++] = &items[k];
                    n = blog_render_ops(tpl, i + 1, op->b, sc, dst, cap, n);
                    sc->n--;
                }
            } else
                n = blog_render_ops(tpl, i + 1, op->b, sc, dst, cap, n);
            if (n == BLOG_NO_ROOM)
                return n;
            i = op->b;
            break;
        default:                /* BLOG_OP_INVERTED */
            if (blog_is_empty(blog_lookup(sc, op->a))) {
                n = blog_render_ops(tpl, i + 1, op->b, sc, dst, cap, n);
                if (n == BLOG_NO_ROOM)
                    return n;
            }
            i = op->b;
            break;
        }
    }
    return n;
}

/* The rendering's length, or BLOG_NO_ROOM when dst's cap bytes are short. */
static size_t
blog_render(const blog_tpl *tpl, const blog_frame *root, char *dst,
            size_t cap)
{
    blog_scope sc = {{root}, root != NULL};

    return blog_render_ops(tpl, 0, tpl->nops, &sc, dst, cap, 0);
}

size_t
blog_tpl_size(const blog_tpl *tpl, const blog_frame *root)
{
    return blog_render(tpl, root, NULL, 0);
}

char *
blog_tpl_write(const blog_tpl *tpl, const blog_frame *root, char *dst)
{
    /* the count is exact: a cap of all memory is never reached */
    return dst + blog_render(tpl, root, dst, BLOG_NO_ROOM);
}

char *
blog_tpl_render(const blog_tpl *tpl, const blog_frame *root,
                blog_alloc_fn alloc, void *alloc_ctx, size_t *len)
{
    size_t n = blog_tpl_size(tpl, root);
    char *buf = alloc(alloc_ctx, n ? n : 1);

    if (buf == NULL)
        return NULL;
    blog_tpl_write(tpl, root, buf);
    *len = n;
    return buf;
}

char *
blog_tpl_render_within(const blog_tpl *tpl, const blog_frame *root,
                       blog_alloc_fn alloc, void *alloc_ctx, size_t cap,
                       size_t *len)
{
    char       *buf = cap > 0 ? alloc(alloc_ctx, cap) : NULL;
    size_t      n = buf ? blog_render(tpl, root, buf, cap) : BLOG_NO_ROOM;

    if (n != BLOG_NO_ROOM) {
        *len = n;
        return buf;
    }
    return blog_tpl_render(tpl, root, alloc, alloc_ctx, len);
}
