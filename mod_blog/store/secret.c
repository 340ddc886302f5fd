/* SPDX-License-Identifier: Apache-2.0 */
/*
 * secret.c - a secret read from its file: Redis's AUTH, BlogCacheKey and
 * the TLS key must be for their owner only, or they are refused.
 */
#include "store/secret.h"

#include "apr_strings.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
blog_secret_read(const char *path, char *buf, apr_size_t cap,
                 apr_size_t *len, char *err, apr_size_t err_len)
{
    struct stat st;
    ssize_t     n = -1;
    int         fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        apr_snprintf(err, err_len, "cannot open %s: %s", path,
                     strerror(errno));
    else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        apr_snprintf(err, err_len, "%s is not a regular file", path);
    else if (st.st_mode & (S_IRWXG | S_IRWXO))
        apr_snprintf(err, err_len, "%s is mode %04o: a secret must be for "
                     "its owner only (chmod 600)", path,
                     (unsigned) (st.st_mode & 07777));
    else if ((n = read(fd, buf, cap - 1)) < 0)
        apr_snprintf(err, err_len, "cannot read %s: %s", path,
                     strerror(errno));
    if (fd >= 0)
        close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    *len = (apr_size_t) n;
    return 0;
}
