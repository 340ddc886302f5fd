/* SPDX-License-Identifier: Apache-2.0 */
/*
 * httpd_stubs.c - the few functions of httpd that the back ends call,
 * at link time, so that db.c, cache.c, invalidate.c and
 * ratelog.c run in the test binary without an Apache: the log keeps its
 * last lines for the tests to read, the hook registrations keep the
 * functions (the tests call invalidate.c's hooks as httpd would), the
 * process mutex is APR's.  counters.c's counters are a plain array here.
 */
#include <errno.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_connection.h"
#include "http_core.h"
#include "ap_mpm.h"
#include "http_log.h"
#include "mpm_common.h"
#include "util_mutex.h"
#include "http_protocol.h"
#include "apr_optional_hooks.h"
#include "apr_strings.h"
#include "apr_thread_mutex.h"
#include "util_filter.h"

#include "backends.h"
#include "fake.h"
#include "store/counters.h"

module AP_MODULE_DECLARE_DATA blog_module;

/* counters.c's counters, wherever they are (its private array or its slot) */
apr_uint64_t
t_stat(int k)
{
    return blog_stat_get((blog_stat) k);
}

/* The log: every line counted, the recent ones kept. */
static pthread_mutex_t t_log_lock = PTHREAD_MUTEX_INITIALIZER;
#define T_LOG_KEEP 64
static char t_log_lines[T_LOG_KEEP][512];
static unsigned t_log_n;

AP_DECLARE(void)
ap_log_error_(const char *file, int line, int module_index, int level,
              apr_status_t status, const server_rec *s, const char *fmt, ...)
{
    va_list     ap;

    (void) file;
    (void) line;
    (void) module_index;
    (void) level;
    (void) status;
    (void) s;
    pthread_mutex_lock(&t_log_lock);
    va_start(ap, fmt);
    apr_vsnprintf(t_log_lines[t_log_n % T_LOG_KEEP], sizeof(t_log_lines[0]),
                  fmt, ap);
    va_end(ap);
    if (getenv("BLOG_UNIT_LOG"))
        fprintf(stderr, "    log: %s\n", t_log_lines[t_log_n % T_LOG_KEEP]);
    t_log_n++;
    pthread_mutex_unlock(&t_log_lock);
}

/* A call's lines with its client's connection (store/call.h): the same
 * log, the client named as httpd's default ErrorLogFormat names it. */
AP_DECLARE(void)
ap_log_cserror_(const char *file, int line, int module_index, int level,
                apr_status_t status, const conn_rec *c, const server_rec *s,
                const char *fmt, ...)
{
    char        msg[512];
    va_list     ap;

    va_start(ap, fmt);
    apr_vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ap_log_error_(file, line, module_index, level, status, s,
                  "[client %s:%d] %s", c->client_ip,
                  c->client_addr ? c->client_addr->port : 0, msg);
}

/* pages.c's and response.c's lines: the same log. */
AP_DECLARE(void)
ap_log_rerror_(const char *file, int line, int module_index, int level,
               apr_status_t status, const request_rec *r, const char *fmt,
               ...)
{
    char        msg[512];
    va_list     ap;

    va_start(ap, fmt);
    apr_vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ap_log_error_(file, line, module_index, level, status, r->server, "%s",
                  msg);
}

unsigned
t_log_count(void)
{
    return T_LOCKED(&t_log_lock, t_log_n);
}

int
t_log_since(unsigned from, const char *needle)
{
    int         found = 0;
    unsigned    i;

    pthread_mutex_lock(&t_log_lock);
    if (t_log_n > T_LOG_KEEP && from < t_log_n - T_LOG_KEEP)
        from = t_log_n - T_LOG_KEEP;
    for (i = from; i < t_log_n && !found; i++)
        found = strstr(t_log_lines[i % T_LOG_KEEP], needle) != NULL;
    pthread_mutex_unlock(&t_log_lock);
    return found;
}

/* The hooks invalidate.c registers, for the tests to call. */
t_hooks     t_hook;

/* Each hook registration keeps the function for the tests. */
#define T_HOOK(name) \
    AP_DECLARE(void) ap_hook_##name(ap_HOOK_##name##_t *pf, \
                                    const char *const *pre, \
                                    const char *const *succ, int order) \
    { \
        (void) pre; \
        (void) succ; \
        (void) order; \
        t_hook.name = pf; \
    }
T_HOOK(pre_config)
T_HOOK(post_config)
T_HOOK(child_init)
T_HOOK(child_stopping)
T_HOOK(handler)
T_HOOK(child_status)
T_HOOK(insert_error_filter)
/* The MPM's process limit and the child's generation, for counters_shm.c. */
int         t_mpm_limit = 4;
int         t_generation = 7;

AP_DECLARE(apr_status_t)
ap_mpm_query(int query, int *result)
{
    if (query == AP_MPMQ_HARD_LIMIT_DAEMONS)
        *result = t_mpm_limit;
    else if (query == AP_MPMQ_GENERATION)
        *result = t_generation;
    else
        return APR_ENOTIMPL;
    return APR_SUCCESS;
}

/* What a handler wrote: ap_rwrite, ap_rputs and ap_rprintf append here. */
char        t_out[T_OUT_MAX];
size_t      t_out_len;

AP_DECLARE(int)
ap_rwrite(const void *buf, int n, request_rec *r)
{
    (void) r;
    if (n < 0 || t_out_len + (size_t) n >= sizeof(t_out))
        return -1;
    memcpy(t_out + t_out_len, buf, (size_t) n);
    t_out_len += (size_t) n;
    t_out[t_out_len] = '\0';
    return n;
}

AP_DECLARE_NONSTD(int)
ap_rprintf(request_rec *r, const char *fmt, ...)
{
    char        buf[4096];
    va_list     ap;
    int         n;

    va_start(ap, fmt);
    n = apr_vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return ap_rwrite(buf, n, r);
}

/* mod_status's optional hook, as status.c adds it. */
t_status_fn *t_status_hook;

APU_DECLARE(void)
apr_optional_hook_add(const char *name, void (*pfn) (void),
                      const char *const *pre, const char *const *succ,
                      int order)
{
    (void) pre;
    (void) succ;
    (void) order;
    if (strcmp(name, "status_hook") == 0)
        t_status_hook = (t_status_fn *) pfn;
}

AP_DECLARE(apr_status_t)
ap_mutex_register(apr_pool_t *pconf, const char *type,
                  const char *default_dir, apr_lockmech_e default_mech,
                  apr_int32_t options)
{
    (void) pconf;
    (void) type;
    (void) default_dir;
    (void) default_mech;
    (void) options;
    return APR_SUCCESS;
}

int         t_mutex_fail;

AP_DECLARE(apr_status_t)
ap_proc_mutex_create(apr_proc_mutex_t **mutex, const char **name,
                     const char *type, const char *instance_id,
                     server_rec *server, apr_pool_t *pool,
                     apr_int32_t options)
{
    (void) name;
    (void) type;
    (void) instance_id;
    (void) server;
    (void) options;
    if (t_mutex_fail)
        return APR_EGENERAL;
    return apr_proc_mutex_create(mutex, NULL, APR_LOCK_DEFAULT, pool);
}

int         t_main_state = AP_SQ_MS_RUN_MPM;

AP_DECLARE(int)
ap_state_query(int query)
{
    return query == AP_SQ_MAIN_STATE ? t_main_state : 0;
}

/* The health check's calls: its handler is captured, not run. */
AP_DECLARE(int)
ap_discard_request_body(request_rec *r)
{
    (void) r;
    return OK;
}

AP_DECLARE(void)
ap_set_content_type(request_rec *r, const char *ct)
{
    r->content_type = ct;
}

AP_DECLARE(void)
ap_set_content_length(request_rec *r, apr_off_t length)
{
    r->clength = length;
}

/* status.c escapes a health check's reason: none comes here. */
char *
ap_escape_html2(apr_pool_t *p, const char *s, int toasc)
{
    (void) toasc;
    return apr_pstrdup(p, s);
}

/*
 * Faults on demand, for the module's own calls (linked with --wrap): an
 * allocation from one pool, a thread mutex or a semaphore that cannot be
 * made, a short read, OpenSSL refusing a TLS floor.
 */
apr_pool_t *t_palloc_fail;
int         t_mutex_create_fail;

int         t_fread_short;

void       *__real_apr_palloc(apr_pool_t *p, apr_size_t size);
void       *__wrap_apr_palloc(apr_pool_t *p, apr_size_t size);
apr_status_t __real_apr_thread_mutex_create(apr_thread_mutex_t **m,
                                            unsigned int flags,
                                            apr_pool_t *p);
apr_status_t __wrap_apr_thread_mutex_create(apr_thread_mutex_t **m,
                                            unsigned int flags,
                                            apr_pool_t *p);

void *
__wrap_apr_palloc(apr_pool_t *p, apr_size_t size)
{
    return p == t_palloc_fail ? NULL : __real_apr_palloc(p, size);
}

apr_status_t
__wrap_apr_thread_mutex_create(apr_thread_mutex_t **m, unsigned int flags,
                               apr_pool_t *p)
{
    if (t_mutex_create_fail)
        return APR_ENOMEM;
    return __real_apr_thread_mutex_create(m, flags, p);
}

/* A semaphore the system will not make: sem_init fails while set. */
int         t_sem_init_fail;
int         __real_sem_init(sem_t *sem, int pshared, unsigned int value);
int         __wrap_sem_init(sem_t *sem, int pshared, unsigned int value);

int
__wrap_sem_init(sem_t *sem, int pshared, unsigned int value)
{
    if (t_sem_init_fail) {
        errno = ENOSYS;
        return -1;
    }
    return __real_sem_init(sem, pshared, value);
}

/* An OpenSSL that will not take TLS 1.2 as the floor (its ctrl fails). */
int         t_tls_floor_fail;
long        __real_SSL_CTX_ctrl(SSL_CTX *ctx, int cmd, long larg, void *parg);
long        __wrap_SSL_CTX_ctrl(SSL_CTX *ctx, int cmd, long larg, void *parg);

long
__wrap_SSL_CTX_ctrl(SSL_CTX *ctx, int cmd, long larg, void *parg)
{
    if (t_tls_floor_fail && cmd == SSL_CTRL_SET_MIN_PROTO_VERSION)
        return 0;
    return __real_SSL_CTX_ctrl(ctx, cmd, larg, parg);
}

/* A file that shrinks under its reader: half of what is asked comes. */
size_t      __real_fread(void *buf, size_t size, size_t n, FILE *fp);
size_t      __wrap_fread(void *buf, size_t size, size_t n, FILE *fp);

size_t
__wrap_fread(void *buf, size_t size, size_t n, FILE *fp)
{
    return __real_fread(buf, size, t_fread_short ? n / 2 : n, fp);
}

/*
 * The output filters (response.c): ap_pass_brigade answers t_pass_rv
 * after counting the brigade's bytes; ap_pass_brigade_fchk is httpd's.
 */
apr_status_t t_pass_rv;
apr_off_t   t_passed;

AP_DECLARE(apr_status_t)
ap_pass_brigade(ap_filter_t *next, apr_bucket_brigade *bb)
{
    apr_off_t   len = 0;

    (void) next;
    apr_brigade_length(bb, 1, &len);
    t_passed += len;
    apr_brigade_cleanup(bb);
    return t_pass_rv;
}

AP_DECLARE_NONSTD(apr_status_t)
ap_pass_brigade_fchk(request_rec *r, apr_bucket_brigade *bb,
                     const char *fmt, ...)
{
    apr_status_t rv = ap_pass_brigade(r->output_filters, bb);

    (void) fmt;
    if (rv == APR_SUCCESS)
        return OK;
    return rv == AP_FILTER_ERROR ? AP_FILTER_ERROR
        : HTTP_INTERNAL_SERVER_ERROR;
}

/* The conditions response.c asks: none was sent. */
AP_DECLARE(ap_condition_e)
ap_condition_if_match(request_rec *r, apr_table_t *headers)
{
    (void) r;
    (void) headers;
    return AP_CONDITION_NONE;
}

AP_DECLARE(ap_condition_e)
ap_condition_if_none_match(request_rec *r, apr_table_t *headers)
{
    (void) r;
    (void) headers;
    return AP_CONDITION_NONE;
}
