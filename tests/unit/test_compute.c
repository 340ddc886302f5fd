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

static void
test_against_sieve(void)
{
    /* a sieve here only checks the trial division, it never replaces it */
    uint32_t max = 1200;
    unsigned char *composite = calloc(max, 1);
    uint64_t sum = 0;
    uint32_t n;
    uint32_t m;
    int bad = 0;

    for (n = 2; n < max; n++) {
        if (!composite[n])
            for (m = n * 2; m < max; m += n)
                composite[m] = 1;
    }
    for (n = 0; n < max; n++) {
        if (n >= 2 && !composite[n - 1] && n - 1 >= 2)
            sum += n - 1;
        if (blog_sum_primes_below(n) != sum)
            bad++;
    }
    CHECK(bad == 0);
    free(composite);
}

static void
test_across_the_narrow_end(void)
{
    /* candidates below 65536 take 16-bit remainders, the rest 32-bit ones */
    static const uint32_t limits[] = {65534, 65535, 65536, 65537, 65538,
                                      65539, 65540, 70000};
    uint32_t max = 70000;
    unsigned char *composite = calloc(max, 1);
    uint64_t sum = 0;
    uint32_t n;
    uint32_t m;
    size_t i = 0;
    int bad = 0;

    for (n = 2; n < max; n++) {
        if (!composite[n])
            for (m = n * 2; m < max; m += n)
                composite[m] = 1;
    }
    for (n = 2; n <= max && i < sizeof(limits) / sizeof(limits[0]); n++) {
        if (!composite[n - 1] && n - 1 >= 2)
            sum += n - 1;
        if (n == limits[i]) {
            if (blog_sum_primes_below(n) != sum)
                bad++;
            i++;
        }
    }
    CHECK(i == sizeof(limits) / sizeof(limits[0]));
    CHECK(bad == 0);
    /* 65537 is prime, 65539 too: both ends of the step count */
    CHECK(blog_sum_primes_below(65538) - blog_sum_primes_below(65537) == 65537);
    free(composite);
}

const t_case t_compute_cases[] = {
    {"compute: known sums, 20000 -> 21171191", test_known_sums},
    {"compute: every limit below 1200 against a sieve", test_against_sieve},
    {"compute: limits on both sides of 65536 against a sieve", test_across_the_narrow_end},
    {NULL, NULL}
};
