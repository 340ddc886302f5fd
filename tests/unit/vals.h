/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vals.h - building template values by hand in the tests.
 */
#ifndef BLOG_TEST_VALS_H
#define BLOG_TEST_VALS_H

#include <string.h>

#include "core/template.h"

static inline blog_val
S(const char *s)
{
    blog_val v = {s, (uint32_t) strlen(s), BLOG_VAL_STR};

    return v;
}

static inline blog_val
L(const blog_frame *items, uint32_t n)
{
    blog_val v = {items, n, BLOG_VAL_LIST};

    return v;
}

#endif
