/*
 * connection.h - the blog's HTTP/1.1 connection loop under the event MPM:
 * keep-alive requests served on the same worker, slow request headers read
 * without holding one, idle connections kept through a graceful stop.
 */
#ifndef BLOG_CONNECTION_H
#define BLOG_CONNECTION_H

#include "apr_time.h"

/*
 * hold: how long a worker waits for the next request; 0 turns it off.
 * park: hand an idle connection back in the MPM's I/O state rather than
 * its keep-alive state (see connection.c).
 */
void blog_connection_child_init(apr_interval_time_t hold, int park);
void blog_connection_register_hooks(void);

#endif
