/* nl-explain-batch.c — what runs many samples through the explainer's
 * batch program: occlusion maps and the PCA projection of a layer. */
#include "engine/session/nl-explain-private.h"
#include "engine/session/nl-pca.h"
#include "engine/session/nl-tsne.h"

#include <math.h>
#include <string.h>

static NlProgram *
batch_program (NlExplainer *e, GError **error)
{
  /* naive memory: a layer's outputs are still there after the forward */
  NlCompileOptions opts = { .batch = NL_EXPLAIN_BATCH, .naive_memory = TRUE,
                            .device = e->l.model->backend->device };
  if (!e->batch)
    e->batch = nl_program_new (e->l.model, &opts, error);
  return e->batch;
}

/* Window starts along an axis of n: every stride, and the last one flush
 * with the end so that every pixel is covered. Returns how many. */
static int
window_starts (int n, int win, int stride, int *starts)
{
  int k = 0;
  for (int s = 0;; s += stride)
    {
      if (s + win >= n)
        {
          starts[k++] = n - win;
          return k;
        }
      starts[k++] = s;
    }
}

/* The drop of the target's probability when a window of 0 (the normalised
 * mean) covers the pixels, averaged over the windows covering each pixel,
 * clipped at 0. */
gboolean
nl_explainer_occlusion (NlExplainer *e, const float *sample, const NlExplainOptions *o, NlExplanation *out,
                        GError **error)
{
  const NlShape *s = &e->l.sample_shape;
  int H, W, win, stride, ny, nx, n;
  g_autofree int *ys = NULL, *xs = NULL;
  g_autofree double *sum = NULL;
  g_autofree int *count = NULL;
  g_autofree float *probs = g_new (float, e->n_classes);
  int64_t plane, numel = nl_shape_numel (s);
  float base;
  NlProgram *b;
  char buf[96];

  if (s->ndim != 3)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "occlusion needs an image input (channels, height, width); run %" G_GINT64_FORMAT
                   "'s network takes %s", e->run, nl_shape_format (s, buf, sizeof buf));
      return FALSE;
    }
  if (o->window < 0 || o->stride < 0)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the occlusion window and stride must be positive");
      return FALSE;
    }
  H = (int) s->d[1];
  W = (int) s->d[2];
  plane = (int64_t) H * W;
  win = o->window > 0 ? o->window : MAX (1, MIN (H, W) / 4);
  stride = o->stride > 0 ? o->stride : MAX (1, win / 2);
  if (win > MIN (H, W))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "the occlusion window %d is larger than the %dx%d image", win, H, W);
      return FALSE;
    }
  if (!nl_explainer_forward (e, sample, o->target_class, out, error) || !(b = batch_program (e, error)))
    return FALSE;
  base = out->scores[out->target];
  ys = g_new (int, H + 1);
  xs = g_new (int, W + 1);
  ny = window_starts (H, win, stride, ys);
  nx = window_starts (W, win, stride, xs);
  n = ny * nx;
  sum = g_new0 (double, plane);
  count = g_new0 (int, plane);
  for (int first = 0; first < n; first += NL_EXPLAIN_BATCH)
    {
      float *x = nl_tensor_f32 (nl_program_input (b));
      const float *pred;
      int rows = MIN (NL_EXPLAIN_BATCH, n - first);
      for (int r = 0; r < NL_EXPLAIN_BATCH; r++)
        {
          float *row = x + r * numel;
          int k = first + MIN (r, rows - 1); /* spare rows repeat the last window */
          memcpy (row, sample, sizeof (float) * numel);
          for (int64_t c = 0; c < s->d[0]; c++)
            for (int y = ys[k / nx]; y < ys[k / nx] + win; y++)
              memset (row + c * plane + (int64_t) y * W + xs[k % nx], 0, sizeof (float) * win);
        }
      if (!nl_program_forward (b, 0, error))
        return FALSE;
      pred = nl_tensor_f32 (nl_program_pred (b));
      for (int r = 0; r < rows; r++)
        {
          int k = first + r;
          double drop;
          nl_explainer_probs (e, pred + (int64_t) r * e->n_classes, probs);
          drop = (double) base - probs[out->target];
          for (int y = ys[k / nx]; y < ys[k / nx] + win; y++)
            for (int xx = xs[k % nx]; xx < xs[k % nx] + win; xx++)
              {
                sum[y * W + xx] += drop;
                count[y * W + xx]++;
              }
        }
    }
  out->height = H;
  out->width = W;
  out->map = g_new0 (float, plane);
  for (int64_t k = 0; k < plane; k++)
    out->map[k] = count[k] ? (float) MAX (sum[k] / count[k], 0.0) : 0.0f;
  nl_explain_normalise (out->map, plane);
  return TRUE;
}

/* Sample i of the test split and its (first) label value: per-step
 * datasets give a label per step (nl_dataset_label_numel). */
static gboolean
get_sample (NlExplainer *e, int64_t i, float *x, int *label, GError **error)
{
  g_autofree float *y = g_new0 (float, nl_dataset_label_numel (e->l.ds));
  if (!nl_dataset_get (e->l.ds, i, x, y, error))
    return FALSE;
  *label = (int) y[0];
  return TRUE;
}

/* Samples [first, first + rows) of the test split, normalised as the
 * loader does, into the batch program's input; their labels into labels. */
static gboolean
load_batch (NlExplainer *e, NlProgram *b, int64_t first, int rows, int *labels, GError **error)
{
  int64_t numel = nl_shape_numel (&e->l.sample_shape);
  float *x = nl_tensor_f32 (nl_program_input (b));
  float mean = e->l.rc.mean, std = e->l.rc.std == 0.0f ? 1.0f : e->l.rc.std;
  for (int r = 0; r < rows; r++)
    {
      if (!get_sample (e, first + r, x + r * numel, &labels[r], error))
        return FALSE;
      if (mean != 0.0f || std != 1.0f)
        for (int64_t k = 0; k < numel; k++)
          x[r * numel + k] = (x[r * numel + k] - mean) / std;
    }
  return TRUE;
}

static gboolean
need_data (NlExplainer *e, GError **error)
{
  if (e->l.ds)
    return TRUE;
  g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND,
               "the dataset “%s” of run %" G_GINT64_FORMAT " is not available on this machine: no test samples",
               e->l.rc.dataset, e->run);
  return FALSE;
}

float *
nl_explainer_test_sample (NlExplainer *e, int64_t index, gboolean normalised, int *label, GError **error)
{
  int64_t numel = nl_shape_numel (&e->l.sample_shape);
  float mean = e->l.rc.mean, std = e->l.rc.std == 0.0f ? 1.0f : e->l.rc.std;
  g_autofree float *x = NULL;
  int y;
  if (!need_data (e, error))
    return NULL;
  if (index < 0 || index >= e->l.ds->length)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "sample %" G_GINT64_FORMAT " is not in %s", index,
                   e->l.ds->description ? e->l.ds->description : e->l.rc.dataset);
      return NULL;
    }
  x = g_new (float, numel);
  if (!get_sample (e, index, x, &y, error))
    return NULL;
  if (normalised && (mean != 0.0f || std != 1.0f))
    for (int64_t k = 0; k < numel; k++)
      x[k] = (x[k] - mean) / std;
  if (label)
    *label = y;
  return g_steal_pointer (&x);
}

/* Node `layer`'s outputs for the first *n test samples (at most the
 * split's): *x (*n x *f) and *labels, g_free. */
static gboolean
collect (NlExplainer *e, const char *layer, int *n, float **x, int64_t *f, int **labels, GError **error)
{
  int node = layer ? nl_explainer_find_node (e, layer) : -1;
  NlProgram *b;
  const NlGraph *g;
  g_autofree float *acts = NULL;
  g_autofree int *lab = NULL;
  const float *act;

  if (node < 0)
    return nl_explainer_unknown_layer (e, layer ? layer : "(none)", error);
  if (!need_data (e, error))
    return FALSE;
  *n = (int) MIN ((int64_t) *n, e->l.ds->length);
  if (*n < 2)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "a projection needs at least two test samples");
      return FALSE;
    }
  if (!(b = batch_program (e, error)))
    return FALSE;
  g = nl_program_get_graph (b);
  *f = nl_tensor_numel (nl_program_value (b, nl_graph_node (g, node)->out)) / NL_EXPLAIN_BATCH;
  act = nl_tensor_f32 (nl_program_value (b, nl_graph_node (g, node)->out));
  if (!(acts = g_try_new (float, (gsize) *n * *f)))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
                   "out of memory: %d samples of %" G_GINT64_FORMAT " features of layer '%s'", *n, *f, layer);
      return FALSE;
    }
  lab = g_new (int, *n);
  for (int first = 0; first < *n; first += NL_EXPLAIN_BATCH)
    {
      int rows = MIN (NL_EXPLAIN_BATCH, *n - first);
      if (!load_batch (e, b, first, rows, lab + first, error) || !nl_program_forward (b, 0, error))
        return FALSE;
      memcpy (acts + (gsize) first * *f, act, sizeof (float) * *f * rows);
    }
  *x = g_steal_pointer (&acts);
  *labels = g_steal_pointer (&lab);
  return TRUE;
}

/* Layer `layer`'s outputs for n samples laid out in 2-D: PCA when
 * perplexity is 0, else t-SNE with it. */
static gboolean
project_2d (NlExplainer *e, const char *layer, int n, double perplexity, float **xy, int **labels, GError **error)
{
  g_autofree float *x = NULL, *coords = NULL;
  int64_t f = 0;
  g_return_val_if_fail (e != NULL && xy != NULL && labels != NULL, FALSE);
  if (!collect (e, layer, &n, &x, &f, labels, error))
    return FALSE;
  coords = g_new (float, (gsize) n * 2);
  if (perplexity > 0)
    nl_tsne_embed (x, n, (int) f, perplexity, 1000, coords);
  else
    nl_pca_project (x, n, (int) f, 2, coords);
  *xy = g_steal_pointer (&coords);
  return TRUE;
}

gboolean
nl_explainer_project (NlExplainer *e, const char *layer, int n, float **xy, int **labels, GError **error)
{
  return project_2d (e, layer, n, 0, xy, labels, error);
}

gboolean
nl_explainer_project_tsne (NlExplainer *e, const char *layer, int n, double perplexity, float **xy, int **labels,
                           GError **error)
{
  return project_2d (e, layer, n, perplexity > 0 ? perplexity : 30, xy, labels, error);
}
