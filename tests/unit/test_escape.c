/*
 * test_escape.c - the five escapes of docs/CONTRACT.md section 5, and
 * nothing else.
 */
#include <stdlib.h>

#include "escape.h"
#include "harness.h"

static void
check_escape(const char *in, size_t len, const char *want)
{
    size_t n = blog_escaped_len(in, len);
    char *out = malloc(n ? n : 1);
    char *end = blog_escape(out, in, len);

    CHECK(n == strlen(want));
    CHECK((size_t) (end - out) == n);
    CHECK_MEM(out, (size_t) (end - out), want, strlen(want));
    free(out);
}

static void
test_five_bytes(void)
{
    check_escape("&", 1, "&amp;");
    check_escape("<", 1, "&lt;");
    check_escape(">", 1, "&gt;");
    check_escape("\"", 1, "&#34;");
    check_escape("'", 1, "&#39;");
    check_escape("<>&\"'", 5, "&lt;&gt;&amp;&#34;&#39;");
    check_escape("&amp;", 5, "&amp;amp;");
}

static void
test_mixed(void)
{
    check_escape("", 0, "");
    check_escape("plain words", 11, "plain words");
    check_escape("Ken & Dennis", 12, "Ken &amp; Dennis");
    check_escape("Why <b>bold</b> matters", 23,
                 "Why &lt;b&gt;bold&lt;/b&gt; matters");
    check_escape("O'Hara", 6, "O&#39;Hara");
    check_escape("a&", 2, "a&amp;");
    check_escape("&a", 2, "&amp;a");
    /* UTF-8, NUL and control bytes pass through */
    check_escape("Z\xc3\xab \xe2\x80\x94 \xe6\x9d\x8e", 11,
                 "Z\xc3\xab \xe2\x80\x94 \xe6\x9d\x8e");
    {
        const char in[] = {'a', '\0', '<', '\n'};
        const char want[] = {'a', '\0', '&', 'l', 't', ';', '\n'};
        char out[16];
        char *end = blog_escape(out, in, sizeof(in));

        CHECK(blog_escaped_len(in, sizeof(in)) == sizeof(want));
        CHECK_MEM(out, (size_t) (end - out), want, sizeof(want));
    }
}

static void
test_every_byte(void)
{
    int c;

    for (c = 0; c < 256; c++) {
        char ch = (char) c;
        char out[8];
        char *end = blog_escape(out, &ch, 1);
        size_t n = (size_t) (end - out);

        CHECK(n == blog_escaped_len(&ch, 1));
        if (strchr("&<>\"'", c) == NULL || c == 0)
            CHECK(n == 1 && out[0] == ch);
        else
            CHECK(n > 1 && out[0] == '&' && out[n - 1] == ';');
    }
}

static void
test_long_runs(void)
{
    /* long safe runs around escapes, into a buffer of the exact size */
    size_t len = 10000;
    char *in = malloc(len);
    char *out;
    char *end;
    size_t i;
    size_t amps = 0;

    for (i = 0; i < len; i++) {
        in[i] = (i % 97 == 0) ? '&' : 'x';
        amps += in[i] == '&';
    }
    out = malloc(blog_escaped_len(in, len));
    end = blog_escape(out, in, len);
    CHECK((size_t) (end - out) == len + 4 * amps);
    CHECK(memcmp(out, "&amp;xxx", 8) == 0);
    CHECK(memcmp(out + 5 + 96, "&amp;", 5) == 0);
    free(out);
    free(in);
}

const t_case t_escape_cases[] = {
    {"escape: the five bytes", test_five_bytes},
    {"escape: mixed text, UTF-8, NUL", test_mixed},
    {"escape: every byte value", test_every_byte},
    {"escape: long runs", test_long_runs},
    {NULL, NULL}
};
