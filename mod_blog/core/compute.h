/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compute.h - the /compute loop of docs/CONTRACT.md section 4: the sum of the
 * primes below limit by scalar trial division, computed afresh on every call.
 */
#ifndef BLOG_COMPUTE_H
#define BLOG_COMPUTE_H

#include <stdint.h>

uint64_t blog_sum_primes_below(uint32_t limit);

#endif
