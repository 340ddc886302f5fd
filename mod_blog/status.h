/*
 * status.h - what an operator asks the server: mod_blog's figures on
 * mod_status's /server-status page and the health check of "SetHandler
 * blog-health".
 */
#ifndef BLOG_STATUS_H
#define BLOG_STATUS_H

void blog_status_register_hooks(void);
void blog_health_register_hooks(void);

#endif
