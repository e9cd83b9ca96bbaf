/* embedding.c — the CPU kernels of Embedding (definition:
 * ops/defs/embedding.c): look up one row of a (input_dim, output_dim)
 * weight per integer index. Indices arrive as floats holding integers (as in
 * MXNet); anything else is a data error reported with the offending value and
 * where it sits. The indices take no gradient; the weight gradient is a
 * scatter-add, done serially so repeated indices cannot race. The
 * padding_index reads zeros and its row gets no gradient. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-embedding.h"

#include <stdio.h>

/* Index i of the flat input as a position in its shape: "(2, 7)". */
static void
format_position (const NlTensor *t, int64_t i, char *buf, size_t size)
{
  int64_t pos[NL_MAX_DIMS];
  size_t n = 0;

  for (int d = t->ndim - 1; d >= 0; d--)
    {
      pos[d] = t->shape[d] ? i % t->shape[d] : 0;
      i = t->shape[d] ? i / t->shape[d] : 0;
    }
  n += snprintf (buf + n, size - n, "(");
  for (int d = 0; d < t->ndim && n < size; d++)
    n += snprintf (buf + n, size - n, d ? ", %" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, pos[d]);
  if (n < size)
    snprintf (buf + n, size - n, ")");
}

/* FALSE with an error naming the first bad index. */
static gboolean
check_indices (const NlOpCtx *c, GError **error)
{
  const NlTensor *idx = c->in[0];
  const float *ip = nl_tensor_f32 (idx);
  int64_t n = nl_numel (idx), vocab = ((const NlEmbeddingArgs *) c->args)->input_dim;
  int64_t bad = -1;

  for (int64_t i = 0; i < n; i++)
    {
      float v = ip[i];
      /* also rejects NaN: every comparison with it is false */
      if (!(v >= 0.0f && v < (float) vocab && v == floorf (v) && (int64_t) v < vocab))
        {
          bad = i;
          break;
        }
    }
  if (bad < 0)
    return TRUE;

  char pos[128];
  float v = ip[bad];
  format_position (idx, bad, pos, sizeof pos);
  if (isfinite (v) && v == floorf (v))
    g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME,
                 "Embedding index %.0f at position %s is out of range: input_dim is %" G_GINT64_FORMAT
                 ", so indices must lie in [0, %" G_GINT64_FORMAT ")", v, pos, vocab, vocab);
  else
    g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME,
                 "Embedding index %g at position %s is not an integer", v, pos);
  return FALSE;
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const float *ip = nl_tensor_f32 (c->in[0]);
  const float *w = nl_tensor_f32 (c->in[1]);
  float *y = nl_tensor_f32 (c->out[0]);
  const NlEmbeddingArgs *a = c->args;
  int64_t n = nl_numel (c->in[0]), dim = a->output_dim, pad = a->padding_index;

  if (!check_indices (c, error))
    return FALSE;
#pragma omp parallel for if (n * dim > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    if ((int64_t) ip[i] == pad)
      memset (y + i * dim, 0, dim * sizeof (float));
    else
      memcpy (y + i * dim, w + (int64_t) ip[i] * dim, dim * sizeof (float));
  return TRUE;
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const float *ip = nl_tensor_f32 (c->in[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  const NlEmbeddingArgs *a = c->args;
  int64_t n = nl_numel (c->in[0]), dim = a->output_dim, pad = a->padding_index;
  float *dw;

  if (!c->in_grad[1])
    return TRUE;
  /* forward has checked these already, but a bad index here would write
     outside the gradient */
  if (!check_indices (c, error))
    return FALSE;
  dw = nl_tensor_f32 (c->in_grad[1]);
  memset (dw, 0, nl_numel (c->in_grad[1]) * sizeof (float));
  for (int64_t i = 0; i < n; i++)
    {
      if ((int64_t) ip[i] == pad)
        continue;
      float *row = dw + (int64_t) ip[i] * dim;
      const float *g = dy + i * dim;
      for (int64_t k = 0; k < dim; k++)
        row[k] += g[k];
    }
  return TRUE;
}

const NlOpKernels nl_op_cpu_embedding = { .forward = forward, .backward = backward };
