/* SPDX-License-Identifier: Apache-2.0 */
/*
 * escape.h - docs/CONTRACT.md section 5's HTML escaping: & < > " ' become
 * &amp; &lt; &gt; &#34; &#39;, nothing else changes.  Pure C.
 */
#ifndef BLOG_ESCAPE_H
#define BLOG_ESCAPE_H

#include <stddef.h>

/* Length of s[0..len) once escaped. */
size_t blog_escaped_len(const char *s, size_t len);

/* Write s[0..len) escaped at dst; returns the end of what was written. */
char *blog_escape(char *dst, const char *s, size_t len);

#endif
