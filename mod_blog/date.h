/*
 * date.h - a timestamptz as the contract writes dates: UTC,
 * "YYYY-MM-DD HH:MM" (docs/CONTRACT.md section 5).  Pure C.
 */
#ifndef BLOG_DATE_H
#define BLOG_DATE_H

#include <stdint.h>

#define BLOG_DATE_LEN 16        /* YYYY-MM-DD HH:MM, not NUL-terminated */

/*
 * us: microseconds since 2000-01-01 00:00 UTC, PostgreSQL's epoch.  Writes
 * BLOG_DATE_LEN bytes at out and returns 0; -1 (nothing written) outside
 * the years 0 to 9999, which four digits cannot show.
 */
int blog_format_date(int64_t us, char *out);

#endif
