/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_compute.c - the sum of primes below limit, against known sums and
 * an independent sieve.
 */
#include <stdlib.h>

#include "core/compute.h"
#include "harness.h"

static void
test_known_sums(void)
{
    CHECK(blog_sum_primes_below(0) == 0);
    CHECK(blog_sum_primes_below(1) == 0);
    CHECK(blog_sum_primes_below(2) == 0);
    CHECK(blog_sum_primes_below(3) == 2);
    CHECK(blog_sum_primes_below(4) == 5);
    CHECK(blog_sum_primes_below(10) == 17);
    CHECK(blog_sum_primes_below(11) == 17);
    CHECK(blog_sum_primes_below(12) == 28);
    CHECK(blog_sum_primes_below(100) == 1060);
    CHECK(blog_sum_primes_below(1000) == 76127);
    CHECK(blog_sum_primes_below(20000) == 21171191);
}

/*
 * sums[n] for n = 0 .. max: the sum of the primes below n, by a sieve,
 * which only checks the trial division here and never replaces it.
 */
static uint64_t *
sums_below(uint32_t max)
{
    unsigned char *composite = calloc(max + 1, 1);
    uint64_t   *sums = calloc(max + 1, sizeof(*sums));
    uint32_t    n;
    uint32_t    m;

    if (composite == NULL || sums == NULL)
        abort();
    for (n = 2; n <= max; n++) {
        if (!composite[n])
            for (m = n * 2; m <= max; m += n)
                composite[m] = 1;
    }
    for (n = 1; n <= max; n++)
        sums[n] = sums[n - 1] + (n - 1 >= 2 && !composite[n - 1] ? n - 1 : 0);
    free(composite);
    return sums;
}

static void
test_against_sieve(void)
{
    uint32_t    max = 1200;
    uint64_t   *sums = sums_below(max);
    uint32_t    n;
    int         bad = 0;

    for (n = 0; n < max; n++) {
        if (blog_sum_primes_below(n) != sums[n])
            bad++;
    }
    CHECK(bad == 0);
    free(sums);
}

static void
test_across_the_narrow_end(void)
{
    /* candidates below 65536 take 16-bit remainders, the rest 32-bit ones */
    static const uint32_t limits[] = {65534, 65535, 65536, 65537, 65538,
                                      65539, 65540, 70000};
    uint64_t   *sums = sums_below(70000);
    size_t      i;
    int         bad = 0;

    for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
        if (blog_sum_primes_below(limits[i]) != sums[limits[i]])
            bad++;
    }
    CHECK(bad == 0);
    /* 65537 is prime, 65539 too: both ends of the step count */
    CHECK(blog_sum_primes_below(65538) - blog_sum_primes_below(65537) == 65537);
    free(sums);
}

const t_case t_compute_cases[] = {
    {"compute: known sums, 20000 -> 21171191", test_known_sums},
    {"compute: every limit below 1200 against a sieve", test_against_sieve},
    {"compute: limits on both sides of 65536 against a sieve", test_across_the_narrow_end},
    {NULL, NULL}
};
