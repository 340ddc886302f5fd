/* SPDX-License-Identifier: Apache-2.0 */
/* date.h - a timestamptz as a date of docs/CONTRACT.md section 5.  Pure C. */
#ifndef BLOG_DATE_H
#define BLOG_DATE_H

#include <stdint.h>

#define BLOG_DATE_LEN 16        /* YYYY-MM-DD HH:MM, not NUL-terminated */

/* us since 2000-01-01 UTC into BLOG_DATE_LEN bytes: 0, or -1 past 9999. */
int blog_format_date(int64_t us, char *out);

#endif
