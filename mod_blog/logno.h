/*
 * logno.h - the tag every mod_blog log message starts with, as httpd's own
 * modules start theirs with APLOGNO(nnnnn) ("AH00123: "): an admin can
 * search for it, and a monitoring rule can match it whatever the wording.
 * httpd's AH numbers belong to httpd's tree, so the module has its own
 * prefix in the same format: BLOGLOGNO(00012) is "BLOG00012: ".
 *
 * Each number is used once in mod_blog/ (tests/tree/logno.py checks it,
 * and that every ap_log_* call has one); a new message takes the next one
 * above the highest in use, and a number is never reused for another
 * meaning.
 */
#ifndef BLOG_LOGNO_H
#define BLOG_LOGNO_H

#define BLOGLOGNO(n) "BLOG" #n ": "

#endif
