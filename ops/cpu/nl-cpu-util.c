/* nl-cpu-util.c — oneDNN engine/streams, scratch, half rounding. */
#include "ops/cpu/nl-cpu-util.h"

static dnnl_engine_t engine;

dnnl_engine_t
nl_dnnl_engine (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      dnnl_status_t st = dnnl_engine_create (&engine, dnnl_cpu, 0);
      if (st != dnnl_success)
        g_error ("oneDNN: cannot create a CPU engine (status %d)", (int) st);
      g_once_init_leave (&once, 1);
    }
  return engine;
}

static void
stream_free (gpointer s)
{
  dnnl_stream_destroy (s);
}

dnnl_stream_t
nl_dnnl_stream (void)
{
  static GPrivate key = G_PRIVATE_INIT (stream_free);
  dnnl_stream_t s = g_private_get (&key);
  if (s == NULL)
    {
      if (dnnl_stream_create (&s, nl_dnnl_engine (), dnnl_stream_default_flags) != dnnl_success)
        g_error ("oneDNN: cannot create a stream");
      g_private_set (&key, s);
    }
  return s;
}

gboolean
nl_dnnl_check (dnnl_status_t st, const char *what, GError **error)
{
  if (st == dnnl_success)
    return TRUE;
  g_set_error (error, NL_OP_ERROR, st == dnnl_out_of_memory ? NL_OP_ERROR_NOMEM : NL_OP_ERROR_RUNTIME,
               "oneDNN failed in %s (status %d)", what, (int) st);
  return FALSE;
}

void *
nl_scratch (void **slot, size_t *capacity, size_t nbytes)
{
  if (*capacity < nbytes)
    {
      g_free (*slot);
      *slot = g_malloc (nbytes);
      *capacity = nbytes;
    }
  return *slot;
}

void
nl_round_bf16_array (float *dst, const float *src, int64_t n)
{
#pragma omp parallel for simd schedule (static) if (n >= NL_PAR_MIN)
  for (int64_t i = 0; i < n; i++)
    dst[i] = nl_round_bf16 (src[i]);
}

void
nl_round_fp16_array (float *dst, const float *src, int64_t n)
{
#pragma omp parallel for simd schedule (static) if (n >= NL_PAR_MIN)
  for (int64_t i = 0; i < n; i++)
    dst[i] = nl_round_fp16 (src[i]);
}

void
nl_round_array (NlPrecision precision, float *dst, const float *src, int64_t n)
{
  switch (precision)
    {
    case NL_PRECISION_BF16:
      nl_round_bf16_array (dst, src, n);
      break;
    case NL_PRECISION_F16:
      nl_round_fp16_array (dst, src, n);
      break;
    default:
      if (dst != src)
        memcpy (dst, src, n * sizeof (float));
      break;
    }
}
