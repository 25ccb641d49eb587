/* vp_split.c - pipeline stages Megatron-Core can interleave.
 *
 * With --num-virtual-stages-per-pipeline-rank V and uneven stages
 * (--decoder-first/last-pipeline-num-layers), TransformerConfig.__post_init__ ("Uneven PP",
 * Megatron-LM d98e8a6 megatron/core/transformer/transformer_config.py) requires the first and last
 * stage's layers and each middle rank's to be divisible by V, each end > 0 and a middle stage not
 * empty.  Counted in chunks of V layers: U = layers / V chunks over pp stages, each at least one.
 */
#include "core/vp_split.h"

int cfit__vp_split_ok(int layers, int pp, int vp)
{
    return pp > 1 && vp > 0 && layers % vp == 0 && layers / vp >= pp;
}

static int max3(int a, int b, int c)
{
    int m = a > b ? a : b;
    return m > c ? m : c;
}

static int gap(int a, int b)
{
    return a > b ? a - b : b - a;
}

/* The ends share what the middle stages leave, the first the larger half (as the even split's
 * remainder goes first; the last stage also computes the loss). */
int cfit__vp_split_choose(int layers, int pp, int vp, cfit__vp_split *out)
{
    if (!cfit__vp_split_ok(layers, pp, vp))
        return 0;
    int units = layers / vp, middles = pp - 2, best_max = -1, best_skew = 0;
    *out = (cfit__vp_split){0, 0, 0};
    if (middles == 0) {
        *out = (cfit__vp_split){(units - units / 2) * vp, 0, units / 2 * vp};
        return 1;
    }
    for (int mid = 1; mid <= (units - 2) / middles; mid++) {
        int rest = units - middles * mid;
        cfit__vp_split s = {(rest - rest / 2) * vp, mid * vp, rest / 2 * vp};
        int m = max3(s.first, s.mid, s.last), k = gap(s.first, s.mid) + gap(s.last, s.mid);
        if (best_max >= 0 && (m > best_max || (m == best_max && k >= best_skew)))
            continue;
        *out = s;
        best_max = m;
        best_skew = k;
    }
    return 1;
}

int cfit__vp_split_even(int layers, int pp, int vp)
{
    cfit__vp_split s = {0, 0, 0};
    if (!cfit__vp_split_choose(layers, pp, vp, &s))
        return 0;
    int ceil_layers = (layers + pp - 1) / pp;
    return s.first <= ceil_layers && s.last <= ceil_layers && (pp == 2 || s.mid <= ceil_layers);
}
