/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness.c - the runner and the helpers of harness.h.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"

int t_case_failures;

typedef struct t_block
{
    struct t_block *next;
    max_align_t data[];
} t_block;

struct t_arena
{
    t_block *head;
};

t_arena *
t_arena_new(void)
{
    t_arena *a = calloc(1, sizeof(*a));

    if (a == NULL)
        abort();
    return a;
}

void *
t_arena_alloc(void *arena, size_t size)
{
    t_arena *a = arena;
    t_block *b = malloc(sizeof(*b) + size);

    if (b == NULL)
        return NULL;
    b->next = a->head;
    a->head = b;
    return b->data;
}

char *
t_arena_strdup(t_arena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = t_arena_alloc(a, n);

    memcpy(d, s, n);
    return d;
}

char *
t_arena_printf(t_arena *a, const char *fmt, ...)
{
    va_list ap;
    int n;
    char *s;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    s = t_arena_alloc(a, (size_t) n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t) n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void
t_arena_free(t_arena *a)
{
    while (a->head) {
        t_block *b = a->head;

        a->head = b->next;
        free(b);
    }
    free(a);
}

char *
t_read_file(t_arena *a, const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0
        || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    buf = t_arena_alloc(a, (size_t) n + 1);
    *len = fread(buf, 1, (size_t) n, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

int
t_write_file(const char *dir, const char *name, const char *data)
{
    char path[4096];
    FILE *f;
    size_t n = strlen(data);
    int rc;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    rc = fwrite(data, 1, n, f) == n ? 0 : -1;
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

void
t_check_mem(const char *file, int line, const char *got, size_t glen,
            const char *want, size_t wlen)
{
    size_t i = 0;
    size_t from;

    if (got && glen == wlen && memcmp(got, want, wlen) == 0)
        return;
    t_case_failures++;
    if (got == NULL) {
        fprintf(stderr, "  %s:%d: got NULL, want %zu bytes\n", file, line,
                wlen);
        return;
    }
    while (i < glen && i < wlen && got[i] == want[i])
        i++;
    from = i > 40 ? i - 40 : 0;
    fprintf(stderr, "  %s:%d: %zu bytes, want %zu; first difference at %zu\n"
            "    got:  \"%.*s\"\n    want: \"%.*s\"\n", file, line, glen, wlen,
            i, (int) ((glen - from) < 80 ? glen - from : 80), got + from,
            (int) ((wlen - from) < 80 ? wlen - from : 80), want + from);
}

/* BLOG_UNIT_ONLY=prefix[,prefix...]: whether name starts with one */
static int
t_selected(const char *name, const char *only)
{
    while (only != NULL) {
        size_t n = strcspn(only, ",");

        if (strncmp(name, only, n) == 0)
            return 1;
        only = only[n] ? only + n + 1 : NULL;
    }
    return 0;
}

static void
t_run(const t_case *cases, int *passed, int *failed)
{
    /* BLOG_UNIT_ONLY: only the cases whose names start so */
    const char *only = getenv("BLOG_UNIT_ONLY");

    for (; cases->name; cases++) {
        if (only && !t_selected(cases->name, only))
            continue;
        t_case_failures = 0;
        cases->fn();
        if (t_case_failures == 0) {
            (*passed)++;
        } else {
            (*failed)++;
            fprintf(stderr, "FAIL %s\n", cases->name);
        }
    }
}

int
main(int argc, char **argv)
{
    /* in this order: the back ends' counters end in stats' slot */
    static const t_case *const suites[] = {
        t_router_cases, t_escape_cases, t_compute_cases, t_template_cases,
        t_golden_cases, t_build_cases, t_directives_cases, t_dbscale_cases,
        t_db_cases, t_cache_cases, t_sentinel_cases, t_invalidate_cases,
        t_stats_cases,
        t_seal_cases, t_redis_io_cases, t_errors_cases, t_hold_cases
    };
    int passed = 0;
    int failed = 0;
    size_t i;

    /* `make fuzz`: fuzz_decode's first inputs */
    if (argc == 3 && strcmp(argv[1], "--fuzz-seeds") == 0)
        return t_fuzz_seeds(argv[2]) == 0 ? 0 : 1;
    /* `make docs`: the generated directives block for docs/OPERATIONS.md or man */
    if (argc == 3 && strcmp(argv[1], "--directives") == 0) {
        t_arena *a = t_arena_new();

        fputs(t_directives_block(a, argv[2]), stdout);
        t_arena_free(a);
        return 0;
    }

    for (i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
        t_run(suites[i], &passed, &failed);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
