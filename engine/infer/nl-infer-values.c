/* nl-infer-values.c — the inference executor's values, steps and memory:
 * a value is a oneDNN memory descriptor (layout, data type) with a scale;
 * nl_infer_want places the one reorder a consumer needs, at compile time;
 * buffers are reused once their last reader has run. */
#include "engine/infer/nl-infer-priv.h"

#include <string.h>

int
nl_infer_new_val (NlInferNet *n, const dnnl_memory_desc_t *md, const NlShape *shape, float scale, int buf)
{
  IVal v = { .md = *md, .shape = *shape, .scale = scale, .buf = buf };
  size_t bytes = dnnl_memory_desc_get_size (md);
  if (buf < 0)
    {
      IBuf b = { .bytes = bytes, .first = (int) n->steps->len, .last = (int) n->steps->len, .block = -1 };
      g_array_append_val (n->bufs, b);
      v.buf = (int) n->bufs->len - 1;
    }
  else
    ibuf (n, buf)->bytes = MAX (ibuf (n, buf)->bytes, bytes);
  g_array_append_val (n->vals, v);
  return (int) n->vals->len - 1;
}

IStep *
nl_infer_add_step (NlInferNet *n, StepKind kind, char *desc)
{
  IStep *s = g_new0 (IStep, 1);
  s->kind = kind;
  s->desc = desc;
  s->out_val = -1;
  g_ptr_array_add (n->steps, s);
  return s;
}

static void
step_touch (NlInferNet *n, IStep *s, int arg, int v, gboolean write)
{
  IBuf *b = ibuf (n, ival (n, v)->buf);
  int idx = (int) n->steps->len - 1;
  if (write)
    b->first = MIN (b->first, idx);
  b->last = MAX (b->last, idx);
  if (arg < 0)
    return;
  g_assert (s->n_args < STEP_MAX_ARGS);
  s->arg[s->n_args] = arg;
  s->arg_val[s->n_args++] = v;
}

void
nl_infer_step_read (NlInferNet *n, IStep *s, int arg, int v)
{
  step_touch (n, s, arg, v, FALSE);
}

void
nl_infer_step_write (NlInferNet *n, IStep *s, int arg, int v)
{
  step_touch (n, s, arg, v, TRUE);
}

void
nl_infer_step_mem (IStep *s, int arg, dnnl_memory_t mem)
{
  g_assert (s->n_args < STEP_MAX_ARGS);
  s->arg[s->n_args] = arg;
  s->arg_val[s->n_args] = -1;
  s->arg_mem[s->n_args++] = mem;
}

void
nl_infer_plain_md (dnnl_memory_desc_t *md, const NlShape *shape, dnnl_data_type_t dt)
{
  dnnl_dims_t dims, strides;
  int64_t st = 1;
  for (int i = shape->ndim - 1; i >= 0; i--)
    {
      dims[i] = shape->d[i];
      strides[i] = st;
      st *= shape->d[i];
    }
  dnnl_memory_desc_init_by_strides (md, shape->ndim, dims, dt, strides);
}

static NlShape
md_shape (const dnnl_memory_desc_t *md)
{
  NlShape s = { .ndim = md->ndims };
  for (int i = 0; i < md->ndims; i++)
    s.d[i] = md->dims[i];
  return s;
}

gboolean
nl_infer_is_plain (const dnnl_memory_desc_t *md)
{
  dnnl_memory_desc_t p;
  NlShape s = md_shape (md);
  if (md->format_kind != dnnl_blocked)
    return FALSE;
  nl_infer_plain_md (&p, &s, md->data_type);
  return dnnl_memory_desc_equal (&p, md);
}

const char *
nl_infer_dt_name (dnnl_data_type_t dt)
{
  switch (dt)
    {
    case dnnl_f32: return "f32";
    case dnnl_u8: return "u8";
    case dnnl_s8: return "s8";
    case dnnl_s32: return "s32";
    default: return "?";
    }
}

static int
view_as (NlInferNet *n, int v, const NlShape *shape)
{
  IVal *s = ival (n, v);
  dnnl_memory_desc_t md;
  nl_infer_plain_md (&md, shape, s->md.data_type);
  int out = nl_infer_new_val (n, &md, shape, s->scale, s->buf);
  ival (n, out)->qscale = ival (n, v)->qscale;
  ival (n, out)->qunsigned = ival (n, v)->qunsigned;
  return out;
}

static gboolean
same_dims (const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b)
{
  return a->ndims == b->ndims && memcmp (a->dims, b->dims, a->ndims * sizeof a->dims[0]) == 0;
}

/* A reorder of v already placed into md at scale, or -1: every consumer
 * of a value that wants it dequantized (or blocked, or plain) shares one. */
static int
placed (NlInferNet *n, int v, const dnnl_memory_desc_t *md, float scale)
{
  for (guint i = 0; i < n->reorders->len; i += 2)
    {
      int from = g_array_index (n->reorders, int, i), to = g_array_index (n->reorders, int, i + 1);
      if (from == v && ival (n, to)->scale == scale && dnnl_memory_desc_equal (&ival (n, to)->md, md))
        return to;
    }
  return -1;
}

/* A reorder of v (same dims) into md at `scale`, as a new step. */
static int
reorder (NlInferNet *n, int v, const dnnl_memory_desc_t *md, float scale, GError **error)
{
  IVal *s = ival (n, v);
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  float factor = scale / s->scale;
  dnnl_primitive_attr_create (&attr);
  if (factor != 1.0f)
    dnnl_primitive_attr_set_output_scales (attr, 1, 0, &factor);
  gboolean ok = nl_dnnl_check (dnnl_reorder_primitive_desc_create (&pd, &s->md, nl_dnnl_engine (), md,
                                                                   nl_dnnl_engine (), attr),
                               "reorder", error);
  dnnl_primitive_attr_destroy (attr);
  if (!ok)
    return -1;
  NlShape shape = s->shape;
  int out = nl_infer_new_val (n, md, &shape, scale, -1);
  ival (n, out)->qscale = ival (n, v)->qscale;
  ival (n, out)->qunsigned = ival (n, v)->qunsigned;
  ok = nl_infer_add_prim_step (n, pd,
                               g_strdup_printf ("reorder %s %s->%s %s", nl_infer_is_plain (&ival (n, v)->md) ? "plain" : "blocked",
                                                nl_infer_dt_name (ival (n, v)->md.data_type),
                                                nl_infer_dt_name (md->data_type),
                                                nl_infer_is_plain (md) ? "plain" : "blocked"),
                               DNNL_ARG_FROM, v, DNNL_ARG_TO, out, "reorder", error);
  g_array_append_val (n->reorders, v);
  g_array_append_val (n->reorders, out);
  return ok ? out : -1;
}

/* v with md's dims: itself, or a plain view of it (made plain first). */
static int
reshape_to (NlInferNet *n, int v, const dnnl_memory_desc_t *md, GError **error)
{
  IVal *s = ival (n, v);
  if (same_dims (&s->md, md))
    return v;
  NlShape from = md_shape (&s->md), to = md_shape (md);
  if (nl_shape_numel (&from) != nl_shape_numel (&to))
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_SHAPE, "inference: a value of %" G_GINT64_FORMAT
                   " elements cannot be read as %" G_GINT64_FORMAT, nl_shape_numel (&from), nl_shape_numel (&to));
      return -1;
    }
  if (!nl_infer_is_plain (&s->md))
    {
      dnnl_memory_desc_t p;
      nl_infer_plain_md (&p, &from, s->md.data_type);
      if ((v = reorder (n, v, &p, s->scale, error)) < 0)
        return -1;
    }
  return view_as (n, v, &to);
}

int
nl_infer_want (NlInferNet *n, int v, const dnnl_memory_desc_t *md, float scale, GError **error)
{
  if ((v = reshape_to (n, v, md, error)) < 0)
    return -1;
  IVal *s = ival (n, v);
  int r;
  if (s->scale == scale && dnnl_memory_desc_equal (&s->md, md))
    return v;
  /* a later reader of the shared copy is safe: a sum in place into it
   * happens only where nothing reads the branch afterwards */
  if ((r = placed (n, v, md, scale)) >= 0)
    return r;
  return reorder (n, v, md, scale, error);
}

int
nl_infer_copy (NlInferNet *n, int v, const dnnl_memory_desc_t *md, float scale, GError **error)
{
  if ((v = reshape_to (n, v, md, error)) < 0)
    return -1;
  return reorder (n, v, md, scale, error);
}

/* ---- memory: buffers into blocks, reused after their last reader ---- */

static int
cmp_first (gconstpointer a, gconstpointer b, gpointer data)
{
  NlInferNet *n = data;
  return ibuf (n, *(const int *) a)->first - ibuf (n, *(const int *) b)->first;
}

static int
cmp_last (gconstpointer a, gconstpointer b, gpointer data)
{
  NlInferNet *n = data;
  int x = ibuf (n, *(const int *) a)->last, y = ibuf (n, *(const int *) b)->last;
  return x < y ? -1 : x > y;
}

/* The free block that fits best, else the largest free one grown, else a new one. */
static int
take_block (GArray *size, GArray *busy, size_t bytes)
{
  int best = -1, largest = -1;
  for (guint k = 0; k < size->len; k++)
    {
      size_t sz = g_array_index (size, size_t, k);
      if (g_array_index (busy, gboolean, k))
        continue;
      if (sz >= bytes && (best < 0 || sz < g_array_index (size, size_t, best)))
        best = (int) k;
      if (largest < 0 || sz > g_array_index (size, size_t, largest))
        largest = (int) k;
    }
  if (best < 0 && largest >= 0)
    {
      best = largest;
      g_array_index (size, size_t, best) = bytes;
    }
  if (best < 0)
    {
      gboolean f = FALSE;
      g_array_append_val (size, bytes);
      g_array_append_val (busy, f);
      best = (int) size->len - 1;
    }
  g_array_index (busy, gboolean, best) = TRUE;
  return best;
}

gboolean
nl_infer_plan_memory (NlInferNet *n, GError **error)
{
  guint nb = n->bufs->len;
  g_autofree int *by_first = g_new (int, nb), *by_last = g_new (int, nb);
  g_autoptr (GArray) size = g_array_new (FALSE, FALSE, sizeof (size_t));
  g_autoptr (GArray) busy = g_array_new (FALSE, FALSE, sizeof (gboolean));
  guint j = 0;
  for (guint b = 0; b < nb; b++)
    by_first[b] = by_last[b] = (int) b;
  g_qsort_with_data (by_first, (gint) nb, sizeof (int), cmp_first, n);
  g_qsort_with_data (by_last, (gint) nb, sizeof (int), cmp_last, n);
  for (guint i = 0; i < nb; i++)
    {
      IBuf *b = ibuf (n, by_first[i]);
      if (b->ext)
        continue;
      /* blocks whose every reader ran before this buffer's writer are free */
      for (; j < nb && ibuf (n, by_last[j])->last < b->first; j++)
        if (!ibuf (n, by_last[j])->ext && ibuf (n, by_last[j])->block >= 0)
          g_array_index (busy, gboolean, ibuf (n, by_last[j])->block) = FALSE;
      b->block = take_block (size, busy, b->bytes);
    }
  n->n_blocks = (int) size->len;
  n->blocks = g_new0 (NlStorage *, MAX (n->n_blocks, 1));
  for (int k = 0; k < n->n_blocks; k++)
    {
      size_t sz = MAX (g_array_index (size, size_t, k), 64);
      if (!(n->blocks[k] = nl_storage_new (sz)))
        {
          g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_NOMEM, "inference: no memory for %zu bytes of activations", sz);
          return FALSE;
        }
      memset (n->blocks[k]->data, 0, sz);
      n->bytes += sz;
    }
  return TRUE;
}

NlStorage *
nl_infer_buf_storage (NlInferNet *n, int buf)
{
  IBuf *b = ibuf (n, buf);
  return b->ext ? b->ext : n->blocks[b->block];
}
