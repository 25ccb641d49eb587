/* vp_split.h - pipeline stages Megatron-Core can interleave (TransformerConfig.__post_init__,
 * "Uneven PP", Megatron-LM d98e8a6). */
#ifndef CFIT_CORE_VP_SPLIT_H
#define CFIT_CORE_VP_SPLIT_H

/* A split of layers over pp stages: first and last stage, and each middle stage. */
typedef struct cfit__vp_split {
    int first, mid, last;
} cfit__vp_split;

/* 1 when layers split over pp > 1 stages of vp > 1 virtual stages each as Megatron-Core accepts:
 * every stage (first, last, each middle rank) a positive multiple of vp. */
int cfit__vp_split_ok(int layers, int pp, int vp);

/* 1 when, besides, that split puts no more layers on a stage than the even split's ceil(layers / pp)
 * (what the plan's cost assumes), so the emitted layout is the one costed. */
int cfit__vp_split_even(int layers, int pp, int vp);

/* The most even such split (the slowest stage smallest; ties: the ends nearest the middle).
 * Returns 0 when cfit__vp_split_ok is 0. */
int cfit__vp_split_choose(int layers, int pp, int vp, cfit__vp_split *out);

#endif
