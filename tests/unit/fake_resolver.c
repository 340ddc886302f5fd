/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_resolver.c - getaddrinfo as a resolver that hangs, for the tests of
 * the Redis connect: this definition stands in for libc's for the whole
 * test binary, hiredis' calls included.  A name under FAKE_HANG_DOMAIN is
 * answered only once fake_resolver_release() is called (or after
 * FAKE_HANG_MS, so that a connect that waits for it ends), then as
 * 127.0.0.1; any other name or address is the system's answer.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netdb.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "fake.h"

static pthread_mutex_t fres_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fres_cv = PTHREAD_COND_INITIALIZER;
static unsigned fres_releases;
static unsigned fres_asked;

typedef int (*fres_fn) (const char *, const char *, const struct addrinfo *,
                        struct addrinfo **);

static int
fres_hangs(const char *node)
{
    size_t      n = node ? strlen(node) : 0;
    size_t      d = strlen(FAKE_HANG_DOMAIN);

    return n > d && strcmp(node + n - d, FAKE_HANG_DOMAIN) == 0;
}

int
getaddrinfo(const char *node, const char *service,
            const struct addrinfo *hints, struct addrinfo **res)
{
    static fres_fn real;

    if (real == NULL)
        real = (fres_fn) dlsym(RTLD_NEXT, "getaddrinfo");
    if (fres_hangs(node)) {
        struct timespec until;
        unsigned    releases;

        if (hints != NULL && (hints->ai_flags & AI_NUMERICHOST))
            return EAI_NONAME;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += FAKE_HANG_MS / 1000;
        pthread_mutex_lock(&fres_lock);
        fres_asked++;
        releases = fres_releases;
        while (fres_releases == releases
               && pthread_cond_timedwait(&fres_cv, &fres_lock, &until) == 0)
            ;
        pthread_mutex_unlock(&fres_lock);
        node = hints != NULL && hints->ai_family == AF_INET6 ? "::1"
            : "127.0.0.1";
    }
    return real(node, service, hints, res);
}

void
fake_resolver_release(void)
{
    pthread_mutex_lock(&fres_lock);
    fres_releases++;
    pthread_cond_broadcast(&fres_cv);
    pthread_mutex_unlock(&fres_lock);
}

unsigned
fake_resolver_asked(void)
{
    return T_LOCKED(&fres_lock, fres_asked);
}
