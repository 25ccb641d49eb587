/* test_vp_split.c - interleaved pipeline splits Megatron-Core accepts (src/core/vp_split.c).
 *
 * TransformerConfig "Uneven PP" (Megatron-LM d98e8a6): the first, last and each middle stage's
 * layers a positive multiple of the virtual stages per rank.  Cases worked by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/vp_split.h"

/* 126 layers (Llama 3 405B) on 8 stages of 2 virtual stages: 63 chunks, six middle stages of 16,
 * the ends 16 and 14; no stage above ceil(126 / 8) = 16. */
static void test_llama405b_pp8_vp2(void **state)
{
    (void)state;
    cfit__vp_split s;
    assert_true(cfit__vp_split_choose(126, 8, 2, &s));
    assert_int_equal(s.first, 16);
    assert_int_equal(s.mid, 16);
    assert_int_equal(s.last, 14);
    assert_int_equal(s.first + 6 * s.mid + s.last, 126);
    assert_true(cfit__vp_split_even(126, 8, 2));
}

/* vp 11 does not divide 126; 61 layers (DeepSeek-V3) is prime: no vp > 1 splits. */
static void test_refused(void **state)
{
    (void)state;
    cfit__vp_split s;
    assert_false(cfit__vp_split_ok(126, 8, 11));
    assert_false(cfit__vp_split_choose(126, 8, 11, &s));
    for (int vp = 2; vp <= 30; vp++)
        assert_false(cfit__vp_split_ok(61, 2, vp));
    assert_false(cfit__vp_split_ok(8, 8, 2));   /* 4 chunks for 8 stages */
}

/* Valid for Megatron but uneven beyond what the plan costs: 126 on 4 stages at vp 21 gives 6
 * chunks (42, 21, 21, 42), above ceil(126 / 4) = 32. An even split and pp 2 (both ends given). */
static void test_even_bound(void **state)
{
    (void)state;
    cfit__vp_split s;
    assert_true(cfit__vp_split_ok(126, 4, 21));
    assert_false(cfit__vp_split_even(126, 4, 21));
    assert_true(cfit__vp_split_choose(80, 8, 2, &s));
    assert_int_equal(s.first, 10);
    assert_int_equal(s.mid, 10);
    assert_int_equal(s.last, 10);
    assert_true(cfit__vp_split_choose(30, 2, 3, &s));
    assert_int_equal(s.first, 15);
    assert_int_equal(s.last, 15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama405b_pp8_vp2),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_even_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
