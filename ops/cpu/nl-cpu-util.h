/* nl-cpu-util.h — small helpers shared by CPU kernels. */
#pragma once

#include <dnnl.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/nl-random.h"
#include "core/nl-threads.h"
#include "ops/nl-op.h"

G_BEGIN_DECLS

/* One oneDNN CPU engine for the process; one stream per calling thread
 * (the scheduler may run kernels on several threads). */
dnnl_engine_t nl_dnnl_engine (void);
dnnl_stream_t nl_dnnl_stream (void);
/* Turn a oneDNN status into a GError naming what failed; TRUE on success. */
gboolean nl_dnnl_check (dnnl_status_t st, const char *what, GError **error);

/* Scratch memory cached on a node: grows, never shrinks; freed with g_free. */
void *nl_scratch (void **slot, size_t *capacity, size_t nbytes);

static inline int64_t
nl_numel (const NlTensor *t)
{
  return nl_tensor_numel (t);
}

/* c ? a : b as masks, which GCC vectorises where a ternary chain stays a
 * branch. */
static inline uint32_t
nl_select_u32 (int c, uint32_t a, uint32_t b)
{
  uint32_t mask = -(uint32_t) (c != 0);
  return (a & mask) | (b & ~mask);
}

/* Rounding to the half types, returned as float (the value the half type
 * holds, widened back): round to nearest, ties to even, as a cast would.
 * Integer bit operations only, so they are the same on every compiler and
 * vectorise; the tests compare them with _Float16 casts and brute force.
 *
 * bf16 is float's top 16 bits: 8-bit exponent, 7-bit mantissa. NaN stays a
 * (quiet) NaN, Inf stays Inf, and a value that rounds past the largest
 * finite bf16 becomes Inf. */
static inline float
nl_round_bf16 (float x)
{
  uint32_t u, r;
  memcpy (&u, &x, sizeof u);
  /* adding 0x7fff plus the kept part's lowest bit rounds half to even; a
   * carry out of the mantissa steps the exponent, up to Inf */
  r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  /* NaN: keep its sign and top payload, set the quiet bit so it cannot
   * truncate to Inf */
  r = nl_select_u32 ((int32_t) (u & 0x7fffffffu) > 0x7f800000, (u | 0x00400000u) & 0xffff0000u, r);
  memcpy (&x, &r, sizeof x);
  return x;
}

/* IEEE binary16: 5-bit exponent, 10-bit mantissa, largest finite 65504,
 * subnormals down to 2^-24. |x| >= 65520 (the midpoint between 65504 and
 * the next step, 65536, which rounds to even, upwards) becomes Inf; NaN
 * stays a quiet NaN with the payload bits a half keeps. */
static inline float
nl_round_fp16 (float x)
{
  uint32_t u, a, sign, normal, sub, m, q, nan, r;
  int32_t shift;
  float sf;
  memcpy (&u, &x, sizeof u);
  sign = u & 0x80000000u;
  a = u & 0x7fffffffu;
  /* normal halves (|x| >= 2^-14): drop 13 mantissa bits, half to even */
  normal = (a + 0x0fffu + ((a >> 13) & 1u)) & ~0x1fffu;
  /* subnormal halves: multiples of 2^-24. The float's mantissa with its
   * implicit bit, m * 2^(e - 150), is rounded to a multiple of 2^-24 by
   * dropping 126 - e bits (at most 25: below 2^-25 everything is 0). */
  m = (a & 0x007fffffu) | 0x00800000u;
  shift = 126 - (int32_t) (a >> 23);
  /* clamped so the shifts stay defined; min/max keep the loop branch-free */
  shift = shift < 14 ? 14 : shift;
  shift = shift > 25 ? 25 : shift;
  q = (m + (1u << (shift - 1)) - 1u + ((m >> shift) & 1u)) >> shift;
  sf = (float) (int32_t) q * 0x1p-24f; /* q <= 1024: exact */
  memcpy (&sub, &sf, sizeof sub);
  nan = 0x7f800000u | ((a | 0x00400000u) & 0x007fe000u);
  /* selects as masks (a < 2^31, so signed compares do): branch-free */
  r = nl_select_u32 ((int32_t) a >= 0x38800000, normal, sub);         /* 2^-14 */
  r = nl_select_u32 ((int32_t) a >= 0x477ff000, 0x7f800000u, r);      /* 65520 and up, Inf too */
  r = nl_select_u32 ((int32_t) a > 0x7f800000, nan, r);
  r |= sign;
  memcpy (&x, &r, sizeof x);
  return x;
}

/* dst[i] = the rounded src[i]; dst may be src. OpenMP above NL_PAR_MIN. */
void nl_round_bf16_array (float *dst, const float *src, int64_t n);
void nl_round_fp16_array (float *dst, const float *src, int64_t n);
/* The rounding that precision asks for (BF16 or F16); F32 copies. */
void nl_round_array (NlPrecision precision, float *dst, const float *src, int64_t n);

G_END_DECLS
