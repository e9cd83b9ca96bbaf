/* nl-layer-stats.c — layer statistics on chosen steps, and the search for
 * the first non-finite value. Both read what each op wrote through the
 * program's step hook, so other steps cost nothing. */
#include "engine/train/nl-layer-stats.h"
#include "core/nl-threads.h"

#include <math.h>
#include <string.h>

typedef struct {
  int slot;                      /* the model's */
  int net_node, k;               /* network node index, weight slot */
  float *before;                 /* the weights before the update (statistics steps) */
} Watched;

struct NlLayerStats {
  NlModel *model;                /* borrowed */
  NlProgram *prog;               /* the statistics step's */
  GArray *tensors;               /* NlTensorStats */
  GArray *watched;               /* Watched, parallel to tensors */
  NlActivationStats *nodes;      /* per node of prog's graph */
  int n_nodes;
  NlLayerStatsReport report;
};

/* A tensor's values where the CPU can read them: itself, or a copy in *buf
 * (a device's memory; freed by the caller). */
static const float *
host_floats (NlBackend *b, NlTensor *t, float **buf, GError **error)
{
  size_t nbytes = (size_t) nl_tensor_numel (t) * sizeof (float);
  *buf = NULL;
  if (b->iface->host_visible)
    return nl_tensor_f32 (t);
  *buf = g_malloc (MAX (nbytes, 1));
  if (!nl_backend_copy (b, *buf, nl_tensor_f32 (t), nbytes, NL_COPY_DEVICE_TO_HOST, error))
    {
      g_clear_pointer (buf, g_free);
      return NULL;
    }
  return *buf;
}

/* Sum of squares (double), min and max of x in one vectorised pass. A
 * finite sum means every value is finite: a NaN or an Inf would show in
 * it, and no float's square overflows a double. */
static double
scan (const float *x, int64_t n, float *mn, float *mx)
{
  double s = 0;
  float lo = n ? x[0] : 0, hi = lo;
#pragma omp parallel for simd if (n > NL_PAR_MIN) reduction (+ : s) reduction (min : lo) reduction (max : hi) \
  schedule (static)
  for (int64_t i = 0; i < n; i++)
    {
      s += (double) x[i] * x[i];
      lo = x[i] < lo ? x[i] : lo;
      hi = x[i] > hi ? x[i] : hi;
    }
  *mn = lo;
  *mx = hi;
  return s;
}

/* The histogram of x and the sum of its squares (NAN when x holds a NaN
 * or an Inf: the histogram then counts the finite values). */
static double
histogram_norm (const float *x, int64_t n, float *lo, float *hi, guint32 counts[NL_LAYER_STATS_BINS])
{
  float mn, mx;
  double ss = scan (x, n, &mn, &mx), scale;
  gboolean all_finite = isfinite (ss);
  memset (counts, 0, sizeof (guint32) * NL_LAYER_STATS_BINS);
  if (!all_finite)
    {
      /* the range of the finite values alone */
      mn = INFINITY;
      mx = -INFINITY;
      for (int64_t i = 0; i < n; i++)
        if (isfinite (x[i]))
          {
            mn = MIN (mn, x[i]);
            mx = MAX (mx, x[i]);
          }
    }
  if (n == 0 || mn > mx)
    {
      *lo = *hi = 0;
      return all_finite ? ss : NAN;
    }
  *lo = mn;
  *hi = mx;
  scale = (double) mx > (double) mn ? NL_LAYER_STATS_BINS / ((double) mx - (double) mn) : 0;
  {
    /* 4 histograms in turn, summed: most values fall in a few bins, and
     * increments of one counter would wait for each other */
    enum { W = NL_LAYER_STATS_BINS + 1 };
    guint32 part[4 * W] = { 0 };
#pragma omp parallel for if (n > NL_PAR_MIN) reduction (+ : part[:4 * W]) schedule (static)
    for (int64_t i = 0; i < n; i++)
      {
        /* a non-finite value (slow path) goes to the extra bin, not counted */
        gboolean counted = all_finite || isfinite (x[i]);
        int b = counted ? MIN ((int) (((double) x[i] - mn) * scale), NL_LAYER_STATS_BINS - 1) : NL_LAYER_STATS_BINS;
        part[(i & 3) * W + b]++;
      }
    for (int b = 0; b < NL_LAYER_STATS_BINS; b++)
      counts[b] = part[b] + part[W + b] + part[2 * W + b] + part[3 * W + b];
  }
  return all_finite ? ss : NAN;
}

void
nl_layer_stats_histogram (const float *x, int64_t n, float *lo, float *hi, guint32 counts[NL_LAYER_STATS_BINS])
{
  histogram_norm (x, n, lo, hi, counts);
}

static void
tensor_stats_clear (gpointer data)
{
  g_free (((NlTensorStats *) data)->tensor);
}

static void
watched_clear (gpointer data)
{
  g_free (((Watched *) data)->before);
}

NlLayerStats *
nl_layer_stats_new (NlModel *model)
{
  NlLayerStats *s = g_new0 (NlLayerStats, 1);
  s->model = model;
  s->tensors = g_array_new (FALSE, TRUE, sizeof (NlTensorStats));
  g_array_set_clear_func (s->tensors, tensor_stats_clear);
  s->watched = g_array_new (FALSE, TRUE, sizeof (Watched));
  g_array_set_clear_func (s->watched, watched_clear);
  return s;
}

void
nl_layer_stats_free (NlLayerStats *s)
{
  if (!s)
    return;
  /* s->prog is not touched: it may be gone (a replaced last-batch
   * program); its hook was taken off after its step */
  g_array_unref (s->tensors);
  g_array_unref (s->watched);
  g_free (s->nodes);
  g_free (s);
}

/* Mean, standard deviation and zeros of a node's output, as the node
 * wrote it (on the worker that ran it: each node has its own slot). */
static void
activation_hook (gpointer user, int node, gboolean forward, NlTensor *const *written, int n)
{
  NlLayerStats *s = user;
  NlActivationStats *a = &s->nodes[node];
  g_autofree float *buf = NULL;
  const float *x;
  int64_t len;
  double sum = 0, sq = 0, zeros = 0, mean;

  if (!forward || n < 1 || !written[0] || node >= s->n_nodes)
    return;
  x = host_floats (s->model->backend, written[0], &buf, NULL);
  len = nl_tensor_numel (written[0]);
  if (!x || len == 0)
    return;
#pragma omp parallel for simd if (len > NL_PAR_MIN) reduction (+ : sum, sq, zeros) schedule (static)
  for (int64_t i = 0; i < len; i++)
    {
      sum += x[i];
      sq += (double) x[i] * x[i];
      zeros += x[i] == 0.0f;
    }
  mean = sum / len;
  a->mean = mean;
  a->std = sqrt (MAX (0, sq / len - mean * mean));
  a->dead_fraction = zeros / len;
  a->seen = TRUE;
}

/* The weight tensors of p's graph that train, once. */
static void
watch_tensors (NlLayerStats *s, NlProgram *p)
{
  const NlGraph *g = nl_program_get_graph (p);
  if (s->watched->len > 0)
    return;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *n = nl_graph_node (g, i);
      for (int k = 0; n->net_index >= 0 && k < n->def->n_weights; k++)
        {
          int slot = NL_MODEL_SLOT (n->net_index, k);
          if (!s->model->weights[slot] || n->wgrad_v[k] < 0)
            continue;
          Watched w = { .slot = slot, .net_node = n->net_index, .k = k,
                        .before = g_new (float, nl_tensor_numel (s->model->weights[slot])) };
          NlTensorStats ts = { .node = g_intern_string (n->id),
                               .tensor = nl_model_weight_name (s->model, n->net_index, k) };
          g_array_append_val (s->watched, w);
          g_array_append_val (s->tensors, ts);
        }
    }
}

void
nl_layer_stats_begin (NlLayerStats *s, NlProgram *p)
{
  const NlGraph *g = nl_program_get_graph (p);
  watch_tensors (s, p);
  if (s->prog != p || s->n_nodes != (int) g->nodes->len)
    {
      g_free (s->nodes);
      s->n_nodes = (int) g->nodes->len;
      s->nodes = g_new0 (NlActivationStats, MAX (s->n_nodes, 1));
      for (int i = 0; i < s->n_nodes; i++)
        s->nodes[i].node = g_intern_string (nl_graph_node (g, i)->id);
    }
  for (int i = 0; i < s->n_nodes; i++)
    s->nodes[i].seen = FALSE;
  s->prog = p;
  nl_program_set_step_hook (p, activation_hook, s);
}

gboolean
nl_layer_stats_before_update (NlLayerStats *s, NlProgram *p, float grad_scale, GError **error)
{
  NlBackend *b = s->model->backend;
  nl_program_set_step_hook (p, NULL, NULL);
  for (guint i = 0; i < s->watched->len; i++)
    {
      Watched *w = &g_array_index (s->watched, Watched, i);
      NlTensorStats *ts = &g_array_index (s->tensors, NlTensorStats, i);
      NlTensor *wt = nl_model_weight_for_device (s->model, w->slot), *gt = nl_program_weight_grad (p, w->net_node, w->k);
      g_autofree float *wbuf = NULL, *gbuf = NULL;
      const float *wx, *gx;
      int64_t n = nl_tensor_numel (wt);
      if (!gt)
        continue;
      if (!(wx = host_floats (b, wt, &wbuf, error)) || !(gx = host_floats (b, gt, &gbuf, error)))
        return FALSE;
      memcpy (w->before, wx, n * sizeof (float));
      ts->weight_norm = sqrt (histogram_norm (wx, n, &ts->w_lo, &ts->w_hi, ts->w_counts));
      ts->grad_norm = sqrt (histogram_norm (gx, n, &ts->g_lo, &ts->g_hi, ts->g_counts)) / grad_scale;
      /* gradients of a scaled loss: the histogram of the true ones */
      ts->g_lo /= grad_scale;
      ts->g_hi /= grad_scale;
    }
  return TRUE;
}

gboolean
nl_layer_stats_after_update (NlLayerStats *s, int64_t step, const NlLayerStatsReport **report, GError **error)
{
  NlBackend *b = s->model->backend;
  if (!nl_model_sync (s->model, error))
    return FALSE;
  for (guint i = 0; i < s->watched->len; i++)
    {
      Watched *w = &g_array_index (s->watched, Watched, i);
      NlTensorStats *ts = &g_array_index (s->tensors, NlTensorStats, i);
      NlTensor *wt = nl_model_weight_for_device (s->model, w->slot);
      g_autofree float *wbuf = NULL;
      const float *wx = host_floats (b, wt, &wbuf, error);
      int64_t n = nl_tensor_numel (wt);
      const float *before = w->before;
      double d = 0;
      if (!wx)
        return FALSE;
#pragma omp parallel for simd if (n > NL_PAR_MIN) reduction (+ : d) schedule (static)
      for (int64_t j = 0; j < n; j++)
        d += ((double) wx[j] - before[j]) * ((double) wx[j] - before[j]);
      ts->update_ratio = ts->weight_norm > 0 ? sqrt (d) / ts->weight_norm : NAN;
    }
  s->report = (NlLayerStatsReport) { .step = step, .n_tensors = (int) s->tensors->len, .n_nodes = s->n_nodes,
                                     .tensors = (const NlTensorStats *) s->tensors->data, .nodes = s->nodes };
  *report = &s->report;
  return TRUE;
}

/* ---- the first non-finite value ---- */

typedef struct {
  NlBackend *backend;
  guint8 *fwd, *bwd;             /* per node: 0 finite, 1 NaN, 2 Inf first */
} Check;

static void
check_hook (gpointer user, int node, gboolean forward, NlTensor *const *written, int n)
{
  Check *c = user;
  for (int k = 0; k < n; k++)
    {
      g_autofree float *buf = NULL;
      const float *x;
      int64_t len;
      if (!written[k] || !(x = host_floats (c->backend, written[k], &buf, NULL)))
        continue;
      len = nl_tensor_numel (written[k]);
      for (int64_t i = 0; i < len; i++)
        if (!isfinite (x[i]))
          {
            (forward ? c->fwd : c->bwd)[node] = isnan (x[i]) ? 1 : 2;
            return;
          }
    }
}

gboolean
nl_layer_stats_find_nonfinite (NlProgram *p, NlModel *model, guint64 step, NlNonfinite *found, GError **error)
{
  const NlGraph *g = nl_program_get_graph (p);
  g_autofree guint8 *fwd = g_new0 (guint8, g->nodes->len + 1), *bwd = g_new0 (guint8, g->nodes->len + 1);
  Check c = { model->backend, fwd, bwd };
  gboolean ok;

  memset (found, 0, sizeof *found);
  nl_program_set_step_hook (p, check_hook, &c);
  ok = nl_program_forward (p, step, error) && (!g->opts.training || nl_program_backward (p, error));
  if (ok)
    ok = nl_model_sync (model, error);
  nl_program_set_step_hook (p, NULL, NULL);
  if (!ok)
    return FALSE;
  /* steps are in execution order: forward's, then backward's */
  for (guint s = 0; s < g->steps->len && !found->node; s++)
    {
      const NlStep *st = &g_array_index (g->steps, NlStep, s);
      guint8 v;
      if (st->kind == NL_STEP_GRAD_SUM)
        continue;
      v = (st->kind == NL_STEP_FORWARD ? fwd : bwd)[st->node];
      if (!v)
        continue;
      found->where = st->kind == NL_STEP_FORWARD ? NL_NONFINITE_FORWARD : NL_NONFINITE_BACKWARD;
      found->node = g_intern_string (nl_graph_node (g, st->node)->id);
      found->is_nan = v == 1;
    }
  return TRUE;
}
