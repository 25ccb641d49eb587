/* test_bench_reduce.c - reduction kernels, bf16 rounding, verifiable inputs and the bit-exact checker (src/bench). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/coll.h"

static uint16_t bf(float f) { return cfit__float_to_bf16(f); }

static float bits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_bf16_rounding(void **state)
{
    (void)state;
    assert_int_equal(bf(1.0f), 0x3f80);
    assert_int_equal(bf(-2.0f), 0xc000);
    assert_int_equal(bf(0.0f), 0x0000);
    assert_int_equal(bf(-0.0f), 0x8000);
    /* 1 + 2^-8 is halfway between 1 (0x3f80, even) and 1 + 2^-7 (0x3f81): ties to even */
    assert_int_equal(bf(bits_f(0x3f808000u)), 0x3f80);
    /* 1 + 3 x 2^-8 is halfway between 0x3f81 (odd) and 0x3f82: up to the even one */
    assert_int_equal(bf(bits_f(0x3f818000u)), 0x3f82);
    /* just above / below halfway */
    assert_int_equal(bf(bits_f(0x3f808001u)), 0x3f81);
    assert_int_equal(bf(bits_f(0x3f807fffu)), 0x3f80);
    /* the largest float rounds up to infinity; infinity and NaN stay */
    assert_int_equal(bf(bits_f(0x7f7fffffu)), 0x7f80);
    assert_int_equal(bf(INFINITY), 0x7f80);
    assert_int_equal(bf(-INFINITY), 0xff80);
    uint16_t nan = bf(bits_f(0x7f800001u));   /* a NaN whose payload is only in the low bits */
    assert_true((nan & 0x7f80) == 0x7f80 && (nan & 0x7f) != 0);
    /* widening is exact */
    assert_true(cfit__bf16_to_float(0x3f81) == 1.0078125f);
    for (uint32_t h = 0; h < 0x10000; h += 7) {
        float f = cfit__bf16_to_float((uint16_t)h);
        if (!isnan(f))
            assert_int_equal(bf(f), h);
    }
}

/* Load/store element k of a buffer of dtype t as a double. */
static double get(cfit_dtype t, const void *b, size_t k)
{
    switch (t) {
    case CFIT_DTYPE_FLOAT: return ((const float *)b)[k];
    case CFIT_DTYPE_DOUBLE: return ((const double *)b)[k];
    case CFIT_DTYPE_INT32: return ((const int32_t *)b)[k];
    case CFIT_DTYPE_INT64: return (double)((const int64_t *)b)[k];
    default: return cfit__bf16_to_float(((const uint16_t *)b)[k]);
    }
}

static void set(cfit_dtype t, void *b, size_t k, double v)
{
    switch (t) {
    case CFIT_DTYPE_FLOAT: ((float *)b)[k] = (float)v; break;
    case CFIT_DTYPE_DOUBLE: ((double *)b)[k] = v; break;
    case CFIT_DTYPE_INT32: ((int32_t *)b)[k] = (int32_t)v; break;
    case CFIT_DTYPE_INT64: ((int64_t *)b)[k] = (int64_t)v; break;
    default: ((uint16_t *)b)[k] = cfit__float_to_bf16((float)v); break;
    }
}

static double ref(cfit_redop op, double a, double b)
{
    switch (op) {
    case CFIT_REDOP_PROD: return a * b;
    case CFIT_REDOP_MIN: return a < b ? a : b;
    case CFIT_REDOP_MAX: return a > b ? a : b;
    default: return a + b;
    }
}

/* Every dtype x op: acc and 3-operand kernels against a scalar reference, odd lengths
 * (vector loop plus remainder), avg's division. */
static void test_kernels(void **state)
{
    (void)state;
    enum { N = 37 };
    for (int t = 0; t < CFIT_DTYPE_COUNT; t++)
        for (int op = 0; op < CFIT_REDOP_COUNT; op++) {
            double a[N], b[N];
            unsigned char x[N * 8], y[N * 8], z[N * 8];
            for (int i = 0; i < N; i++) {
                a[i] = (i * 7 % 11) - 5;
                b[i] = (i * 5 % 9) - 4;
                set((cfit_dtype)t, x, (size_t)i, a[i]);
                set((cfit_dtype)t, y, (size_t)i, b[i]);
            }
            cfit__reduce3((cfit_dtype)t, (cfit_redop)op, z, x, y, N);
            cfit__reduce_acc((cfit_dtype)t, (cfit_redop)op, x, y, N);
            for (int i = 0; i < N; i++) {
                double want = ref((cfit_redop)op, a[i], b[i]);
                if (get((cfit_dtype)t, z, (size_t)i) != want || get((cfit_dtype)t, x, (size_t)i) != want)
                    fail_msg("%s %s element %d: %g op %g = %g / %g, want %g", cfit_dtype_name((cfit_dtype)t),
                             cfit_redop_name((cfit_redop)op), i, a[i], b[i], get((cfit_dtype)t, z, (size_t)i),
                             get((cfit_dtype)t, x, (size_t)i), want);
            }
            /* finish: avg divides by the ranks (integers truncate toward zero), others untouched */
            cfit__reduce_finish((cfit_dtype)t, (cfit_redop)op, z, N, 2);
            for (int i = 0; i < N; i++) {
                double s = ref((cfit_redop)op, a[i], b[i]);
                double want = op != CFIT_REDOP_AVG ? s
                              : (t == CFIT_DTYPE_INT32 || t == CFIT_DTYPE_INT64) ? trunc(s / 2) : s / 2;
                assert_true(get((cfit_dtype)t, z, (size_t)i) == want);
            }
        }
}

/* bf16 reduces in fp32 and rounds once: 256 + 1 is not representable (ties to even 256),
 * 256 + 3 rounds to 260. */
static void test_bf16_reduce_rounds(void **state)
{
    (void)state;
    uint16_t a[2] = {bf(256.0f), bf(256.0f)}, b[2] = {bf(1.0f), bf(3.0f)};
    cfit__reduce_acc(CFIT_DTYPE_BF16, CFIT_REDOP_SUM, a, b, 2);
    assert_true(cfit__bf16_to_float(a[0]) == 256.0f);
    assert_true(cfit__bf16_to_float(a[1]) == 260.0f);
}

/* Integer sum and product wrap (no undefined behaviour under UBSan); min/max are signed. */
static void test_int_wrap(void **state)
{
    (void)state;
    int32_t a[3] = {INT32_MAX, INT32_MIN, -5}, b[3] = {1, -1, 3};
    cfit__reduce_acc(CFIT_DTYPE_INT32, CFIT_REDOP_SUM, a, b, 3);
    assert_int_equal(a[0], INT32_MIN);
    assert_int_equal(a[1], INT32_MAX);
    int64_t c[2] = {INT64_MAX, -7}, e[2] = {2, 3};
    cfit__reduce_acc(CFIT_DTYPE_INT64, CFIT_REDOP_PROD, c, e, 2);
    assert_true(c[0] == -2 && c[1] == -21);
    int32_t m[2] = {-3, 4}, n[2] = {2, -9};
    cfit__reduce_acc(CFIT_DTYPE_INT32, CFIT_REDOP_MIN, m, n, 2);
    assert_true(m[0] == -3 && m[1] == -9);
}

/* Reduce every rank's inputs in a given rank order with the real kernels (the dtype's own
 * arithmetic, partial results stored in the dtype, as a ring does). */
static void fold(cfit_dtype t, cfit_redop op, int nranks, const int *order, size_t n, void *acc, void *tmp)
{
    cfit__verify_fill(t, (int)op, nranks, order[0], 7, 1000, acc, n);
    for (int i = 1; i < nranks; i++) {
        cfit__verify_fill(t, (int)op, nranks, order[i], 7, 1000, tmp, n);
        cfit__reduce_acc(t, op, acc, tmp, n);
    }
    cfit__reduce_finish(t, op, acc, n, nranks);
}

/* The property the checker rests on: for every dtype x op and rank count (odd, even, many),
 * reducing in any order gives exactly cfit__verify_expect's bits. */
static void test_expect_is_exact_in_any_order(void **state)
{
    (void)state;
    static const int ranks[] = {1, 2, 3, 4, 7, 8, 41, 64, 101, 130, 300};
    enum { N = 300 };
    unsigned char *acc = malloc(N * 8), *tmp = malloc(N * 8), *want = malloc(N * 8);
    int *order = malloc(sizeof *order * 300);
    assert_non_null(acc), assert_non_null(tmp), assert_non_null(want), assert_non_null(order);
    for (size_t ri = 0; ri < sizeof ranks / sizeof ranks[0]; ri++) {
        int n = ranks[ri];
        for (int t = 0; t < CFIT_DTYPE_COUNT; t++)
            for (int op = 0; op < CFIT_REDOP_COUNT; op++) {
                cfit__verify_expect((cfit_dtype)t, op, n, 7, 1000, want, N);
                for (int pass = 0; pass < 3; pass++) {
                    for (int i = 0; i < n; i++)   /* forward, backward, a stride permutation */
                        order[i] = pass == 0 ? i : pass == 1 ? n - 1 - i : (int)((i * 37L + 11) % n);
                    if (pass == 2 && n % 37 == 0)
                        continue;
                    fold((cfit_dtype)t, (cfit_redop)op, n, order, N, acc, tmp);
                    uint64_t wrong = cfit__verify_compare((cfit_dtype)t, acc, want, N);
                    if (wrong)
                        fail_msg("%s %s with %d ranks (order %d): %llu of %d elements differ", cfit_dtype_name((cfit_dtype)t),
                                 cfit_redop_name((cfit_redop)op), n, pass, (unsigned long long)wrong, N);
                }
            }
    }
    free(acc), free(tmp), free(want), free(order);
}

/* The inputs are not trivial: ranks differ, and the result differs from any one input. */
static void test_inputs_differ(void **state)
{
    (void)state;
    enum { N = 256 };
    for (int t = 0; t < CFIT_DTYPE_COUNT; t++)
        for (int op = 0; op <= CFIT__REDOP_NONE; op++) {
            unsigned char r0[N * 8], r1[N * 8], want[N * 8];
            cfit__verify_fill((cfit_dtype)t, op, 4, 0, 1, 0, r0, N);
            cfit__verify_fill((cfit_dtype)t, op, 4, 1, 1, 0, r1, N);
            assert_true(cfit__verify_compare((cfit_dtype)t, r0, r1, N) > N / 4);
            if (op == CFIT__REDOP_NONE)
                continue;
            cfit__verify_expect((cfit_dtype)t, op, 4, 1, 0, want, N);
            assert_true(cfit__verify_compare((cfit_dtype)t, r0, want, N) > N / 4);
        }
}

static void test_compare_and_corrupt(void **state)
{
    (void)state;
    enum { N = 5000 };
    for (int t = 0; t < CFIT_DTYPE_COUNT; t++) {
        size_t es = cfit_dtype_size((cfit_dtype)t);
        unsigned char *a = malloc(N * es), *b = malloc(N * es);
        assert_non_null(a), assert_non_null(b);
        cfit__verify_fill((cfit_dtype)t, CFIT_REDOP_SUM, 3, 2, 9, 0, a, N);
        memcpy(b, a, N * es);
        assert_int_equal(cfit__verify_compare((cfit_dtype)t, a, b, N), 0);
        cfit__verify_corrupt((cfit_dtype)t, b, N, 17);
        assert_int_equal(cfit__verify_compare((cfit_dtype)t, a, b, N), 17);
        memcpy(b, a, N * es);
        cfit__verify_corrupt((cfit_dtype)t, b, 3, 10);   /* more than there are: all 3 */
        assert_int_equal(cfit__verify_compare((cfit_dtype)t, a, b, N), 3);
        free(a), free(b);
    }
}

static void test_names(void **state)
{
    (void)state;
    cfit_dtype t;
    cfit_redop op;
    cfit_diag d;
    for (int i = 0; i < CFIT_DTYPE_COUNT; i++) {
        assert_int_equal(cfit_dtype_parse(cfit_dtype_name((cfit_dtype)i), &t, &d), 0);
        assert_int_equal(t, i);
    }
    assert_int_equal(cfit_dtype_parse("bfloat16", &t, &d), 0);
    assert_int_equal(t, CFIT_DTYPE_BF16);
    assert_int_equal(cfit_dtype_parse("flaot", &t, &d), CFIT_EUNKNOWN);
    assert_non_null(strstr(d.msg, "did you mean 'float'"));
    for (int i = 0; i < CFIT_REDOP_COUNT; i++) {
        assert_int_equal(cfit_redop_parse(cfit_redop_name((cfit_redop)i), &op, &d), 0);
        assert_int_equal(op, i);
    }
    assert_int_equal(cfit_redop_parse("mean", &op, &d), CFIT_EUNKNOWN);
    assert_int_equal(cfit_dtype_size(CFIT_DTYPE_BF16), 2);
    assert_int_equal(cfit_dtype_size(CFIT_DTYPE_INT64), 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_rounding),
        cmocka_unit_test(test_kernels),
        cmocka_unit_test(test_bf16_reduce_rounds),
        cmocka_unit_test(test_int_wrap),
        cmocka_unit_test(test_expect_is_exact_in_any_order),
        cmocka_unit_test(test_inputs_differ),
        cmocka_unit_test(test_compare_and_corrupt),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
