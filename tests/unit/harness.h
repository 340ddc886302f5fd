/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness.h - a minimal unit test harness: CHECK counts a failed assertion
 * against the running test, and the runner prints "N passed, N failed"
 * over test cases.
 */
#ifndef BLOG_TEST_HARNESS_H
#define BLOG_TEST_HARNESS_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Set by the Makefile; these serve a run from tests/unit. */
#ifndef TEMPLATES_DIR
#define TEMPLATES_DIR "../../templates"
#endif
#ifndef GOLDEN_DIR
#define GOLDEN_DIR "../golden"
#endif
#ifndef TREE_DIR
#define TREE_DIR "../.."
#endif

extern int t_case_failures;

#define CHECK(cond) \
    do { \
        if (!(cond)) { \
            t_case_failures++; \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", \
                    __FILE__, __LINE__, #cond); \
        } \
    } while (0)

/* Byte-exact comparison that shows where two buffers first differ. */
#define CHECK_MEM(got, glen, want, wlen) \
    t_check_mem(__FILE__, __LINE__, (got), (glen), (want), (wlen))
#define CHECK_STR(got, glen, want) \
    t_check_mem(__FILE__, __LINE__, (got), (glen), (want), strlen(want))

void t_check_mem(const char *file, int line, const char *got, size_t glen,
                 const char *want, size_t wlen);

typedef struct t_case
{
    const char *name;
    void (*fn) (void);
} t_case;

/* The case fn_arg(): fn(arg), one check run in several modes. */
#define T_WITH(fn, arg) \
    static void fn##_##arg(void) { fn(arg); }

/* Every allocation is its own malloc block, so that ASan and valgrind see
 * an overrun of any buffer the code under test was given. */
typedef struct t_arena t_arena;
t_arena *t_arena_new(void);
void *t_arena_alloc(void *arena, size_t size);
char *t_arena_strdup(t_arena *a, const char *s);
char *t_arena_printf(t_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void t_arena_free(t_arena *a);

/* Whole file into an arena buffer; NULL when unreadable. */
char *t_read_file(t_arena *a, const char *path, size_t *len);
/* Writes data to dir/name; returns 0 on success. */
int t_write_file(const char *dir, const char *name, const char *data);

extern const t_case t_router_cases[];
extern const t_case t_escape_cases[];
extern const t_case t_compute_cases[];
extern const t_case t_template_cases[];
extern const t_case t_golden_cases[];
extern const t_case t_build_cases[];
extern const t_case t_directives_cases[];
extern const t_case t_dbscale_cases[];
extern const t_case t_db_cases[];
extern const t_case t_cache_cases[];
extern const t_case t_sentinel_cases[];
extern const t_case t_invalidate_cases[];
extern const t_case t_stats_cases[];
extern const t_case t_hold_cases[];
extern const t_case t_seal_cases[];
extern const t_case t_redis_io_cases[];
extern const t_case t_errors_cases[];

/* The directives block of docs/OPERATIONS.md ("readme") or the man page ("man"). */
char *t_directives_block(t_arena *a, const char *kind);
/* Writes fuzz_decode.c's seed inputs into dir; 0 on success. */
int t_fuzz_seeds(const char *dir);

#endif
