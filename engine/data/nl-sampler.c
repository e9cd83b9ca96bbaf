/* nl-sampler.c — the loader's epoch orders and train/validation splits
 * (declared in nl-loader.h; the batcher draws its orders here too, so both
 * give the same batches). */
#include "engine/data/nl-loader.h"

#include <math.h>

static guint64
splitmix64 (guint64 *s)
{
  guint64 z = (*s += G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Uniform in [0, range) without modulo bias (Lemire's method). */
static guint64
rng_below (guint64 *s, guint64 range)
{
  __extension__ typedef unsigned __int128 u128;
  u128 m = (u128) splitmix64 (s) * range;
  guint64 lo = (guint64) m;
  if (lo < range)
    {
      guint64 t = -range % range;
      while (lo < t)
        {
          m = (u128) splitmix64 (s) * range;
          lo = (guint64) m;
        }
    }
  return (guint64) (m >> 64);
}

void
nl_sampler_order (int64_t n, gboolean shuffle, guint64 seed, int epoch, int64_t *out)
{
  g_return_if_fail (n >= 0 && (n == 0 || out != NULL));
  for (int64_t i = 0; i < n; i++)
    out[i] = i;
  if (!shuffle)
    return;
  guint64 s = seed;
  guint64 state = splitmix64 (&s) ^ ((guint64) epoch * G_GUINT64_CONSTANT (0xD1B54A32D192ED03)
                                     + G_GUINT64_CONSTANT (0x8CB92BA72F3D8DD7));
  for (int64_t i = n - 1; i > 0; i--)
    {
      int64_t j = (int64_t) rng_below (&state, (guint64) i + 1);
      int64_t t = out[i];
      out[i] = out[j];
      out[j] = t;
    }
}

void
nl_split_indices (int64_t n, double val_fraction, guint64 seed, int64_t **train_idx,
                  int64_t *n_train, int64_t **val_idx, int64_t *n_val)
{
  g_return_if_fail (train_idx && n_train && val_idx && n_val);
  *train_idx = *val_idx = NULL;
  *n_train = *n_val = 0;
  g_return_if_fail (n >= 0 && val_fraction >= 0 && val_fraction <= 1);

  int64_t nv = CLAMP ((int64_t) llround ((double) n * val_fraction), 0, n);
  int64_t *perm = g_new (int64_t, MAX (n, 1));
  /* Salted so the split is unrelated to a loader's epoch orders from the
   * same seed. */
  nl_sampler_order (n, TRUE, seed ^ G_GUINT64_CONSTANT (0x5BD1E9955BD1E995), 0, perm);
  guint8 *is_val = g_new0 (guint8, MAX (n, 1));
  for (int64_t i = 0; i < nv; i++)
    is_val[perm[i]] = 1;
  int64_t *tr = g_new (int64_t, MAX (n - nv, 1)), *va = g_new (int64_t, MAX (nv, 1));
  int64_t a = 0, b = 0;
  for (int64_t i = 0; i < n; i++)
    if (is_val[i])
      va[b++] = i;
    else
      tr[a++] = i;
  g_free (perm);
  g_free (is_val);
  *train_idx = tr;
  *n_train = a;
  *val_idx = va;
  *n_val = b;
}
