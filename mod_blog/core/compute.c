/* SPDX-License-Identifier: Apache-2.0 */
/* compute.c - its own file: no caller's constant is folded into the loop. */
#include "core/compute.h"

/*
 * The candidates below 65536 are tested with 16-bit remainders: docs/
 * CONTRACT.md section 4 leaves the width free where the values fit, and
 * the divider's time follows the width (on this project's AMD EPYC the
 * limit of 20 000 takes 0.70 of the time it takes in 32 bits; docs/
 * DECISIONS.md, "/compute in 16-bit remainders below 65 536").
 * Every divisor is still tried one at a time, up to the first that divides.
 */
#define BLOG_NARROW_END 65536u

static uint64_t
sum_primes_narrow(uint32_t from, uint32_t to)
{
    uint64_t sum = 0;
    uint32_t n;

    for (n = from; n < to; n++) {
        uint16_t n16 = (uint16_t) n;
        int prime = 1;
        uint16_t d;

        /* d stays below 256 here: 256 * 256 is past every n16 */
        for (d = 2; (uint32_t) d * d <= n; d++) {
            if ((uint16_t) (n16 % d) == 0) {
                prime = 0;
                break;
            }
        }
        if (prime)
            sum += n;
    }
    return sum;
}

static uint64_t
sum_primes_wide(uint32_t from, uint32_t to)
{
    uint64_t sum = 0;
    uint32_t n;

    for (n = from; n < to; n++) {
        int prime = 1;
        uint32_t d;

        /* 64-bit square: d * d would wrap for n near UINT32_MAX */
        for (d = 2; (uint64_t) d * d <= n; d++) {
            if (n % d == 0) {
                prime = 0;
                break;
            }
        }
        if (prime)
            sum += n;
    }
    return sum;
}

uint64_t
blog_sum_primes_below(uint32_t limit)
{
    /* below 2 both ranges are empty */
    uint32_t narrow_end = limit < BLOG_NARROW_END ? limit : BLOG_NARROW_END;

    return sum_primes_narrow(2, narrow_end) + sum_primes_wide(narrow_end, limit);
}
