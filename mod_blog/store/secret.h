/* SPDX-License-Identifier: Apache-2.0 */
/* secret.h - a secret file, read only when for its owner only (secret.c). */
#ifndef BLOG_SECRET_H
#define BLOG_SECRET_H

#include "apr.h"

/* Up to cap - 1 bytes of a regular file for its owner only (as ssh's and
 * mod_ssl's secrets): 0 with buf NUL-terminated, or -1 with err why. */
int blog_secret_read(const char *path, char *buf, apr_size_t cap,
                     apr_size_t *len, char *err, apr_size_t err_len);

#endif
