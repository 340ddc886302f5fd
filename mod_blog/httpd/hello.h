/* SPDX-License-Identifier: Apache-2.0 */
/* hello.h - a TLS connection waits for its ClientHello in the MPM's poll. */
#ifndef BLOG_HELLO_H
#define BLOG_HELLO_H

/* After the configuration is read: in_use, some server mounts the blog. */
void blog_hello_configure(int in_use);
void blog_hello_register_hooks(void);

#endif
