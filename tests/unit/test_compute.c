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

const t_case t_compute_cases[] = {
    {"compute: known sums, 20000 -> 21171191", test_known_sums},
    {"compute: every limit below 1200 against a sieve", test_against_sieve},
    {NULL, NULL}
};
