/* compute.c - its own file: no caller's constant is folded into the loop. */
#include "core/compute.h"

uint64_t
blog_sum_primes_below(uint32_t limit)
{
    uint64_t sum = 0;
    uint32_t n;

    for (n = 2; n < limit; n++) {
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
