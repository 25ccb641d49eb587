/* verify.c - benchmark inputs whose reduction is known exactly, and the bit-exact check.
 *
 * The input of rank r at global index i is a function of (seed, r, i) only, so every rank
 * can compute what any other rank sent and the exact result of the collective.  Values are
 * chosen so that every partial result a reduction can form, in any order and in any dtype
 * (bf16 has 8 significant bits), is exactly representable; then the result does not depend
 * on the order in which ranks were combined, and the check compares bits with no tolerance:
 *   sum   small integers in [-2, 2] (bf16: [-1, 1], and 0 on ranks >= 128, so every
 *         partial sum stays within 256)
 *   prod  +-1, 2 and 1/2 for floating types (exponents stay within +-nranks; +-1 only from
 *         100 ranks on); +-1 and 2 on the first 8 ranks for integers (|product| <= 256)
 *   min/max  integers (floating types: multiples of 1/8, bf16 of 1/2) from a wide range
 *   avg   b + d_r where b in [-2, 2] is the same on every rank and the offsets d_r in [1, 3]
 *         cancel in pairs (+d, -d; an odd last rank adds 0), so the sum is exactly nranks x b
 *         and the division gives b exactly (bf16 beyond 40 ranks: b = 0, d = 1 on the first
 *         256 ranks and 0 after, so partial sums stay within 128)
 *   none  (collectives that only move data) values spread over the type
 * The expected value is formed in double (or int64) arithmetic, which holds every partial
 * result exactly, and converted to the dtype.
 */
#include "bench/coll.h"

#include <string.h>

/* splitmix64 finaliser: a good hash of a 64-bit key. */
static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t hash3(uint64_t seed, uint64_t a, uint64_t b)
{
    return mix(seed * 0x2545f4914f6cdd1dULL ^ mix(a * 0x9e3779b97f4a7c15ULL ^ mix(b)));
}

static int is_float(cfit_dtype t)
{
    return t == CFIT_DTYPE_FLOAT || t == CFIT_DTYPE_DOUBLE || t == CFIT_DTYPE_BF16;
}

/* Input value of (rank, idx) as a double (exact in the dtype by construction). */
static double input(cfit_dtype t, int op, int nranks, int rank, uint64_t seed, uint64_t idx)
{
    uint64_t h = hash3(seed, (uint64_t)rank + 1, idx);
    switch (op) {
    case CFIT_REDOP_SUM:
        if (t == CFIT_DTYPE_BF16)
            return rank >= 128 ? 0.0 : (double)(int)(h % 3) - 1.0;
        return (double)(int)(h % 5) - 2.0;
    case CFIT_REDOP_PROD: {
        static const double fl[4] = {1.0, -1.0, 2.0, 0.5};
        if (is_float(t))
            return nranks >= 100 ? fl[h % 2] : fl[h % 4];
        if (rank < 8 && h % 4 == 2)
            return 2.0;
        return h % 2 ? -1.0 : 1.0;
    }
    case CFIT_REDOP_MIN:
    case CFIT_REDOP_MAX:
        switch (t) {
        case CFIT_DTYPE_BF16: return ((double)(h % 255) - 127.0) / 2.0;
        case CFIT_DTYPE_FLOAT:
        case CFIT_DTYPE_DOUBLE: return ((double)(h % 200001) - 100000.0) / 8.0;
        default: return (double)(h % 2000001) - 1000000.0;
        }
    case CFIT_REDOP_AVG: {
        uint64_t hb = hash3(seed, 0, idx);   /* the same on every rank */
        int narrow = t == CFIT_DTYPE_BF16 && nranks > 40;
        double b = narrow ? 0.0 : (double)(int)(hb % 5) - 2.0;
        if ((nranks % 2 && rank == nranks - 1) || (narrow && rank >= 256))
            return b;
        double d = narrow ? 1.0 : (double)(hash3(seed, (uint64_t)(rank / 2) + 1u + (1ULL << 40), idx) % 3 + 1);
        return rank % 2 ? b - d : b + d;
    }
    default:
        return 0.0;
    }
}

/* Raw input bits for collectives that do not reduce: spread over the type. */
static void put_none(cfit_dtype t, void *buf, size_t k, uint64_t h)
{
    switch (t) {
    case CFIT_DTYPE_FLOAT: ((float *)buf)[k] = (float)((double)(int64_t)(h % (1u << 20)) - (1 << 19)) / 16.0f; break;
    case CFIT_DTYPE_DOUBLE: ((double *)buf)[k] = ((double)(int64_t)(h % (1ULL << 40)) - (double)(1ULL << 39)) / 16.0; break;
    case CFIT_DTYPE_INT32: ((uint32_t *)buf)[k] = (uint32_t)h; break;
    case CFIT_DTYPE_INT64: ((uint64_t *)buf)[k] = h; break;
    case CFIT_DTYPE_BF16: {
        uint16_t v = (uint16_t)h;
        if ((v & 0x7f80u) == 0x7f80u)   /* no NaN or infinity */
            v &= (uint16_t)~0x4000u;
        ((uint16_t *)buf)[k] = v;
        break;
    }
    case CFIT_DTYPE_COUNT: break;
    }
}

static void put(cfit_dtype t, void *buf, size_t k, double v)
{
    switch (t) {
    case CFIT_DTYPE_FLOAT: ((float *)buf)[k] = (float)v; break;
    case CFIT_DTYPE_DOUBLE: ((double *)buf)[k] = v; break;
    case CFIT_DTYPE_INT32: ((int32_t *)buf)[k] = (int32_t)v; break;
    case CFIT_DTYPE_INT64: ((int64_t *)buf)[k] = (int64_t)v; break;
    case CFIT_DTYPE_BF16: ((uint16_t *)buf)[k] = cfit__float_to_bf16((float)v); break;
    case CFIT_DTYPE_COUNT: break;
    }
}

void cfit__verify_fill(cfit_dtype t, int op, int nranks, int rank, uint64_t seed, uint64_t first, void *buf,
                       size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (op == CFIT__REDOP_NONE)
            put_none(t, buf, k, hash3(seed, (uint64_t)rank + 1, first + k));
        else
            put(t, buf, k, input(t, op, nranks, rank, seed, first + k));
    }
}

void cfit__verify_expect(cfit_dtype t, int op, int nranks, uint64_t seed, uint64_t first, void *buf, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        uint64_t idx = first + k;
        double v = input(t, op, nranks, 0, seed, idx);
        for (int r = 1; r < nranks; r++) {
            double x = input(t, op, nranks, r, seed, idx);
            switch (op) {
            case CFIT_REDOP_SUM:
            case CFIT_REDOP_AVG: v += x; break;
            case CFIT_REDOP_PROD: v *= x; break;
            case CFIT_REDOP_MIN: v = x < v ? x : v; break;
            case CFIT_REDOP_MAX: v = x > v ? x : v; break;
            default: break;
            }
        }
        if (op == CFIT_REDOP_AVG)
            v /= nranks;   /* exact: the sum is nranks x b */
        put(t, buf, k, v);
    }
}

uint64_t cfit__verify_compare(cfit_dtype t, const void *got, const void *want, size_t n)
{
    size_t es = cfit_dtype_size(t);
    const unsigned char *g = got, *w = want;
    uint64_t wrong = 0;
    /* Compare in blocks with memcmp and only look at elements inside differing blocks. */
    const size_t block = 4096;
    for (size_t i = 0; i < n; i += block / es) {
        size_t m = n - i < block / es ? n - i : block / es;
        if (memcmp(g + i * es, w + i * es, m * es) == 0)
            continue;
        for (size_t k = 0; k < m; k++)
            wrong += memcmp(g + (i + k) * es, w + (i + k) * es, es) != 0;
    }
    return wrong;
}

void cfit__verify_corrupt(cfit_dtype t, void *buf, size_t n, uint64_t k)
{
    size_t es = cfit_dtype_size(t);
    unsigned char *b = buf;
    if (k > n)
        k = n;
    for (uint64_t j = 0; j < k; j++) {
        size_t at = (size_t)(j * (n / k));   /* k distinct elements spread over buf */
        b[at * es] ^= 1u;
    }
}
