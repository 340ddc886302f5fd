/* SPDX-License-Identifier: Apache-2.0 */
/*
 * backends.h - what the tests of the back ends share: httpd_stubs.c's log,
 * counters and captured hooks, and a request to call the module with.
 */
#ifndef BLOG_TEST_BACKENDS_H
#define BLOG_TEST_BACKENDS_H

#include "httpd.h"
#include "http_config.h"
#include "mpm_common.h"
#include "http_connection.h"
#include "http_protocol.h"
#include "apr_time.h"

#include "store/call.h"

/* A request's call of the store, as httpd/store_call.h makes it. */
#define T_CALL(r) (&(blog_call) {.pool = (r)->pool, .s = (r)->server, \
                                   .c = (r)->connection})

/* Log lines written so far; whether one since from contains needle. */
unsigned    t_log_count(void);
int         t_log_since(unsigned from, const char *needle);

/* A counter of store/counters.h. */
apr_uint64_t t_stat(int k);

typedef struct t_hooks
{
    ap_HOOK_pre_config_t *pre_config;
    ap_HOOK_post_config_t *post_config;
    ap_HOOK_child_init_t *child_init;
    ap_HOOK_child_stopping_t *child_stopping;
    ap_HOOK_handler_t *handler;
    ap_HOOK_child_status_t *child_status;
    ap_HOOK_insert_error_filter_t *insert_error_filter;
} t_hooks;
extern t_hooks t_hook;
/* ap_proc_mutex_create fails while set; ap_state_query's main state. */
extern int  t_mutex_fail;
extern int  t_main_state;
/* Faults of the module's calls: apr_palloc from this pool returns NULL;
 * apr_thread_mutex_create fails while set. */
extern apr_pool_t *t_palloc_fail;
extern int  t_mutex_create_fail;
/* fread returns half of what is asked while set. */
extern int  t_fread_short;
/* sem_init fails while set. */
extern int  t_sem_init_fail;
/* SSL_CTX_set_min_proto_version fails while set. */
extern int  t_tls_floor_fail;
/* ap_pass_brigade's answer, and the bytes it was given. */
extern apr_status_t t_pass_rv;
extern apr_off_t t_passed;
/* ap_mpm_query's HARD_LIMIT_DAEMONS and GENERATION */
extern int  t_mpm_limit;
extern int  t_generation;
/* What the code under test wrote with ap_rwrite, ap_rputs, ap_rprintf. */
#define T_OUT_MAX 65536
extern char t_out[T_OUT_MAX];
extern size_t t_out_len;
/* mod_status's hook, as status.c registers it. */
typedef int t_status_fn (request_rec *r, int flags);
extern t_status_fn *t_status_hook;

/* The process's root pool, APR initialised on the first call. */
apr_pool_t *t_root(void);
/* A request_rec with its own pool and a server. */
request_rec *t_request(apr_pool_t *parent);
/* A fresh directory under /tmp for the fakes' sockets, and its removal. */
const char *t_sockdir(apr_pool_t *p);
void        t_sockdir_remove(const char *dir);

/* Milliseconds since t. */
long        t_ms_since(apr_time_t t);

/*
 * Margin for every deadline bound: the call must end by its deadline plus
 * this, on a loaded machine under valgrind.  Generous on purpose: the test
 * proves that the call does not wait for ever, not how fast it gives up.
 */
#define T_MARGIN_MS 5000

#endif
