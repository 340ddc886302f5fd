/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compute_bench.c - the ceiling of /compute: docs/CONTRACT.md section 4's loop
 * alone, in one process on one core, with no HTTP around it.  It calls
 * mod_blog's own
 * blog_sum_primes_below() for a given number of seconds and prints one line:
 *
 *   calls=N seconds=S calls_per_s=X us_per_call=Y cpu_us_per_call=C
 *   cpu_share=Z
 *
 * cpu_share is CPU time over wall time: below 1 means the machine lent the
 * core to someone else, and only the CPU time per call still tells what one
 * core can do.
 *
 *   compute_bench [SECONDS [LIMIT]]      defaults: 5, 20000
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/resource.h>

#include "core/compute.h"

#define CONTRACT_LIMIT 20000u
#define CONTRACT_SUM 21171191u

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6
        + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 5.0;
    /* volatile: the limit must come from outside, as it does in mod_blog */
    volatile unsigned limit = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10)
                                       : CONTRACT_LIMIT;
    unsigned long long calls = 0;
    uint64_t first = blog_sum_primes_below(limit);
    double t0, t1, c0, cpu, elapsed;

    if (limit == CONTRACT_LIMIT && first != CONTRACT_SUM) {
        fprintf(stderr, "compute_bench: sum %llu, the contract says %u\n",
                (unsigned long long)first, CONTRACT_SUM);
        return 1;
    }
    c0 = cpu_s();
    t0 = now_s();
    do {
        /* check every result, so that no call can be dropped as dead code */
        if (blog_sum_primes_below(limit) != first) {
            fprintf(stderr, "compute_bench: result changed between calls\n");
            return 1;
        }
        calls++;
        t1 = now_s();
    } while (t1 - t0 < seconds);
    elapsed = t1 - t0;
    cpu = cpu_s() - c0;
    printf("calls=%llu seconds=%.3f calls_per_s=%.1f us_per_call=%.2f "
           "cpu_us_per_call=%.2f cpu_share=%.3f\n", calls, elapsed,
           calls / elapsed, elapsed * 1e6 / calls, cpu * 1e6 / calls,
           cpu / elapsed);
    return 0;
}
