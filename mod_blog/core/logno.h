/* SPDX-License-Identifier: Apache-2.0 */
/*
 * logno.h - the tag of every log message, as httpd's APLOGNO: BLOGLOGNO(00012)
 * is "BLOG00012: ".  Each number once, never reused (tests/tree/logno.py).
 * A macro and nothing else, in core/ because every layer logs and includes
 * point only downward.
 */
#ifndef BLOG_LOGNO_H
#define BLOG_LOGNO_H

#define BLOGLOGNO(n) "BLOG" #n ": "

#endif
