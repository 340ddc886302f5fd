/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stale.c - stale.h's table: a fixed number of slots, each the latest
 * moment any key hashed to it was made stale, and one for every key.  A
 * bounded memory for any number of keys: two keys that share a slot only
 * make each other's older pages misses, which costs a rebuild, never a
 * stale page.  Anonymous shared memory from the parent, one table per
 * generation (pconf), so the children of a generation share what their
 * listener heard; apr_atomic reads and writes, no lock (one writer).
 */
#include "store/stale.h"

#include "apr_atomic.h"
#include "apr_shm.h"

#include <string.h>
#include <xxhash.h>

/* Far more than the keys a blog's pages have (a page per post, the index). */
#define STALE_SLOTS 4096

typedef struct stale_table
{
    apr_uint64_t all;           /* apr_time_t: every key stale then */
    apr_uint64_t slot[STALE_SLOTS];
} stale_table;

static stale_table *stale;

/* The table goes with its generation's pool: a later generation without a
 * listener has none. */
static apr_status_t
stale_forget(void *data)
{
    (void) data;
    stale = NULL;
    return APR_SUCCESS;
}

apr_status_t
blog_stale_create(apr_pool_t *pconf)
{
    apr_shm_t  *shm;
    apr_status_t rv;

    stale = NULL;
    rv = apr_shm_create(&shm, sizeof(stale_table), NULL, pconf);
    if (rv != APR_SUCCESS)
        return rv;
    stale = apr_shm_baseaddr_get(shm);
    memset(stale, 0, sizeof(*stale));
    /* registered after the segment's own: run before it is unmapped */
    apr_pool_cleanup_register(pconf, NULL, stale_forget,
                              apr_pool_cleanup_null);
    return APR_SUCCESS;
}

static apr_uint64_t *
stale_slot(const char *key, apr_size_t len)
{
    return &stale->slot[XXH3_64bits(key, len) % STALE_SLOTS];
}

/* The later of the slot's moment and t: the listener's thread writes. */
static void
stale_raise(apr_uint64_t *at, apr_time_t t)
{
    if ((apr_uint64_t) t > apr_atomic_read64(at))
        apr_atomic_set64(at, (apr_uint64_t) t);
}

void
blog_stale_mark(const char *key, apr_size_t len, apr_time_t t)
{
    if (stale != NULL)
        stale_raise(stale_slot(key, len), t);
}

void
blog_stale_mark_all(apr_time_t t)
{
    if (stale != NULL)
        stale_raise(&stale->all, t);
}

apr_time_t
blog_stale_since(const char *key, apr_size_t len)
{
    apr_uint64_t all, one;

    if (stale == NULL)
        return 0;
    all = apr_atomic_read64(&stale->all);
    one = apr_atomic_read64(stale_slot(key, len));
    return (apr_time_t) (all > one ? all : one);
}
