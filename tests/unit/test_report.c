/* test_report.c - the SVG chart module and HTML writer (src/report) against golden files.
 *
 * Each chart is compared byte for byte with tests/fixtures/report/NAME.svg; UPDATE_GOLDEN=1 in the
 * environment rewrites the files instead (read the diff before committing).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

static void golden(const char *name, const cfit_buf *b)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/report/%s.svg", CFIT_SOURCE_DIR, name);
    assert_true(cfit_buf_ok(b));
    if (getenv("UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(b->data, 1, b->len, f);
        fclose(f);
        return;
    }
    char *want = slurp(path);
    if (!want)
        fail_msg("%s missing (run with UPDATE_GOLDEN=1)", path);
    if (strcmp(want, b->data) != 0) {
        size_t i = 0;
        while (want[i] && want[i] == b->data[i])
            i++;
        fail_msg("%s differs at byte %zu: got '%.60s'", path, i, b->data + i);
    }
    free(want);
}

static void test_line_log(void **state)
{
    (void)state;
    double x[] = {1024, 8192, 65536, 1048576, 33554432};
    double ring[] = {0.5, 3.2, 15.1, 40.2, 46.9}, tree[] = {0.9, 5.0, 18.0, 35.5, 41.0};
    double bound[] = {50, 50, 50, 50, 50};
    cfit_series s[] = {{"ring", x, ring, 5, 0}, {"tree <&>", x, tree, 5, 0}, {"link bound", x, bound, 5, 1}};
    cfit_chart c = {CFIT_CHART_LINE, "busbw", "Bus bandwidth vs message size", "ring and tree on 16 ranks",
                     {"message size (bytes)", 2, CFIT_FMT_BYTES, 0, 0}, {"busbw (GB/s)", 0, CFIT_FMT_NUM, 0, 0},
                     NULL, 0, s, 3, 0, 0};
    cfit_buf b;
    cfit_buf_init(&b);
    assert_int_equal(cfit_chart_svg(&b, &c), 0);
    assert_non_null(strstr(b.data, "tree &lt;&amp;&gt;"));   /* escaped */
    assert_non_null(strstr(b.data, ">32 KiB<"));              /* log2 ticks every 3 powers (7 fit), binary units */
    assert_non_null(strstr(b.data, "<desc id=\"busbw-d\">"));
    golden("line_log", &b);
    cfit_buf_fini(&b);
}

static void test_scatter_log10(void **state)
{
    (void)state;
    double days_a[] = {7.7, 15.0, 30.2}, usd_a[] = {2.03e6, 1.1e6, 1.0e6};
    double days_b[] = {12.0, 55.0}, usd_b[] = {1.5e6, 0.9e6};
    double fx[] = {7.7, 15.0, 55.0}, fy[] = {2.03e6, 1.1e6, 0.9e6};
    cfit_series s[] = {{"b200", days_a, usd_a, 3, 0}, {"h100-sxm", days_b, usd_b, 2, 0}, {"Pareto front", fx, fy, 3, 1}};
    cfit_chart c = {CFIT_CHART_SCATTER, "pareto", "Cost vs time", "two GPU types and their front",
                     {"time to train (days)", 10, CFIT_FMT_INT, 0, 0}, {"cost (USD)", 10, CFIT_FMT_NUM, 0, 0},
                     NULL, 0, s, 3, 720, 380};
    cfit_buf b;
    cfit_buf_init(&b);
    assert_int_equal(cfit_chart_svg(&b, &c), 0);
    assert_non_null(strstr(b.data, ">100<"));    /* log10 ticks 1, 10, 100 */
    assert_non_null(strstr(b.data, ">10M<"));    /* 100k, 1M, 10M */
    assert_null(strstr(b.data, "fill=\"none\" stroke=\"#0072B2\""));         /* scatter: no line through b200 */
    assert_non_null(strstr(b.data, "fill=\"none\" stroke=\"#000000\" stroke-width=\"2\" stroke-dasharray=\"5 4\""));
                                                                            /* but the front is a dashed line */
    golden("scatter_log10", &b);
    cfit_buf_fini(&b);
}

static void test_stacked(void **state)
{
    (void)state;
    const char *cats[] = {"tp8 pp4", "tp4 pp8", "tp8 pp8"};
    double w[] = {17.6e9, 17.6e9, 8.8e9}, o[] = {35e9, 35e9, 17e9}, a[] = {20e9, 12e9, 30e9};
    cfit_series s[] = {{"weights", NULL, w, 3, 0}, {"optimizer", NULL, o, 3, 0}, {"activations", NULL, a, 3, 0}};
    cfit_chart c = {CFIT_CHART_STACKED, "mem", "Memory per GPU", "three plans", {"plan", 0, CFIT_FMT_PLAIN, 0, 0},
                     {"memory per GPU (bytes)", 0, CFIT_FMT_NUM, 0, 0}, cats, 3, s, 3, 0, 0};
    cfit_buf b;
    cfit_buf_init(&b);
    assert_int_equal(cfit_chart_svg(&b, &c), 0);
    assert_non_null(strstr(b.data, ">80G<"));   /* nice ticks: 0 20G 40G 60G 80G */
    golden("stacked", &b);
    cfit_buf_fini(&b);
    c.kind = CFIT_CHART_BAR;
    cfit_buf_init(&b);
    assert_int_equal(cfit_chart_svg(&b, &c), 0);
    assert_null(strstr(b.data, ">80G<"));       /* grouped: the tallest bar is 35G -> 40G */
    assert_non_null(strstr(b.data, ">40G<"));
    golden("bar", &b);
    cfit_buf_fini(&b);
    c.ncat = 0;
    cfit_buf_init(&b);
    assert_int_equal(cfit_chart_svg(&b, &c), -1);
    assert_int_equal(b.len, 0);
    cfit_buf_fini(&b);
}

static void test_heatmap(void **state)
{
    (void)state;
    const char *names[] = {"node0", "node1", "node2"};
    double v[] = {NAN, 11.9, 12.1, 12.0, NAN, 3.1, 11.8, 3.0, NAN};
    unsigned char mark[] = {0, 0, 0, 0, 0, 1, 0, 1, 0};
    cfit_heatmap h = {"pairs", "Pairwise bandwidth", "node1-node2 is slow", "GB/s", names, names, 3, 3, v, mark,
                       "slow link", 0};
    cfit_buf b;
    cfit_buf_init(&b);
    assert_int_equal(cfit_heatmap_svg(&b, &h), 0);
    assert_non_null(strstr(b.data, "node1 to node2: 3.1 GB/s"));
    golden("heatmap", &b);
    cfit_buf_fini(&b);
}

static void test_ticks_and_colours(void **state)
{
    (void)state;
    char buf[48], col[8];
    assert_string_equal(cfit__fmt_tick(buf, sizeof buf, 1536, CFIT_FMT_BYTES), "1.5 KiB");
    assert_string_equal(cfit__fmt_tick(buf, sizeof buf, 2.5e6, CFIT_FMT_NUM), "2.5M");
    assert_string_equal(cfit__fmt_tick(buf, sizeof buf, 0.125, CFIT_FMT_PLAIN), "0.125");
    assert_string_equal(cfit__fmt_tick(buf, sizeof buf, 16384, CFIT_FMT_INT), "16384");
    assert_string_equal(cfit__fmt_tick(buf, sizeof buf, 131072, CFIT_FMT_INT), "131k");
    cfit_heat_colour(0, col);
    assert_string_equal(col, "#440154");
    cfit_heat_colour(2, col);
    assert_string_equal(col, "#fde725");
    assert_string_equal(cfit__palette(0), "#0072B2");
    assert_string_equal(cfit__palette(8), "#0072B2");
}

static void test_html(void **state)
{
    (void)state;
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_html_begin(&b, "a < b");
    const char *head[] = {"x", "y"}, *row[] = {"1.5 GB", "<script>"};
    cfit_html_table_begin(&b, "t", head, 2);
    cfit_html_row(&b, row, 2);
    cfit_html_table_end(&b);
    cfit_html_p(&b, "%d & %s", 3, "\"q\"");
    cfit_html_end(&b);
    assert_true(cfit_buf_ok(&b));
    assert_non_null(strstr(b.data, "<title>a &lt; b</title>"));
    assert_non_null(strstr(b.data, "<td class=\"n\">1.5 GB</td><td>&lt;script&gt;</td>"));
    assert_non_null(strstr(b.data, "3 &amp; &quot;q&quot;"));
    assert_non_null(strstr(b.data, "@media print"));
    assert_null(strstr(b.data, "<script"));
    cfit_buf_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_log),  cmocka_unit_test(test_scatter_log10), cmocka_unit_test(test_stacked), cmocka_unit_test(test_heatmap),
        cmocka_unit_test(test_ticks_and_colours), cmocka_unit_test(test_html),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
