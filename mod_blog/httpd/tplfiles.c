/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tplfiles.c - a template's source from its file, for core's compiler,
 * which reads none itself.  Plain stdio, at start-up only: the fuzzers and
 * the golden tests load the same files without APR.
 */
#include "httpd/tplfiles.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Far above any page's template; bounds what a start-up will read. */
#define TPLFILES_MAX_FILE (1024 * 1024)

/* Fewer bytes than fstat said, and no read error: the file changed. */
#define TPLFILES_SHORT (-1)

/* A whole file from f's allocator: 0, an errno value, or TPLFILES_SHORT. */
static int
tplfiles_read(const blog_tpl_files *f, const char *path, char **data,
              size_t *len)
{
    FILE       *fp = fopen(path, "re");
    struct stat st;
    int         e = 0;

    if (fp == NULL)
        return errno;
    if (fstat(fileno(fp), &st) < 0)
        e = errno;
    else if (!S_ISREG(st.st_mode) || st.st_size > TPLFILES_MAX_FILE)
        e = S_ISDIR(st.st_mode) ? EISDIR
            : S_ISREG(st.st_mode) ? EFBIG : EINVAL;
    else if ((*data = f->alloc(f->alloc_ctx,
                               (size_t) st.st_size + 1)) == NULL)
        e = ENOMEM;
    else if ((*len = fread(*data, 1, (size_t) st.st_size, fp))
             != (size_t) st.st_size)
        /* a template cut short would compile, and serve half a page */
        e = !ferror(fp) ? TPLFILES_SHORT : errno ? errno : EIO;
    fclose(fp);
    return e;
}

int
blog_tpl_file_source(void *ctx, const char *name, const char **src,
                     size_t *len, const char **srcname, char *why,
                     size_t whylen)
{
    const blog_tpl_files *f = ctx;
    size_t      size;
    char       *path;
    char       *data = NULL;
    int         e;

    /* a partial never leaves the templates folder */
    if (name[0] == '\0' || name[0] == '.' || strchr(name, '/') != NULL) {
        snprintf(why, whylen, "invalid file name");
        return -1;
    }
    size = strlen(f->dir) + strlen(name) + sizeof("/.html");
    if ((path = f->alloc(f->alloc_ctx, size)) == NULL) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    snprintf(path, size, "%s/%s.html", f->dir, name);
    if ((e = tplfiles_read(f, path, &data, len)) != 0) {
        snprintf(why, whylen, "%s: %s", path, e == TPLFILES_SHORT
                 ? "it changed while it was read" : strerror(e));
        return -1;
    }
    *src = data;
    *srcname = path;
    return 0;
}
