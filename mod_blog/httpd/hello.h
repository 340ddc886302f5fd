/* SPDX-License-Identifier: Apache-2.0 */
/* hello.h - a TLS connection waits for its ClientHello in the MPM's poll. */
#ifndef BLOG_HELLO_H
#define BLOG_HELLO_H

/* After the configuration is read: wanted, some server mounts the blog and
 * BlogHandshakeWait is On.  Otherwise the hook declines at once, and every
 * connection is served as without the module. */
void blog_hello_configure(int wanted);
void blog_hello_register_hooks(void);

#endif
