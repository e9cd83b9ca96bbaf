/* nl-explain.c — saliency, Grad-CAM and occlusion maps of a run's
 * checkpoint, its activations, and their PCA projection (nl-explain.h).
 *
 * The gradients come from an explain program (NlCompileOptions.explain):
 * ops in inference mode, a backward from the prediction whose head
 * gradient is set here to one-hot on the target class, so after backward
 * every GRAD value holds d(score of the target)/d(that value), the
 * Input node's output included. Its memory plan is naive, so every
 * activation and gradient is still there to read after the step. The
 * score is the network's output for the class (the logit where the
 * network ends before its softmax, as Grad-CAM's y^c). */
#include "engine/session/nl-explain.h"
#include "engine/session/nl-evaluate.h"
#include "engine/session/nl-explain-private.h"
#include "engine/session/nl-pca.h"
#include "engine/train/nl-metric.h"

#include <math.h>
#include <string.h>

const char *
nl_explain_method_name (NlExplainMethod m)
{
  static const char *const names[] = { "saliency", "gradcam", "occlusion" };
  return m >= 0 && m < NL_EXPLAIN_METHOD_COUNT ? names[m] : NULL;
}

gboolean
nl_explain_method_parse (const char *s, NlExplainMethod *m)
{
  for (int i = 0; i < NL_EXPLAIN_METHOD_COUNT; i++)
    if (s && !strcmp (s, nl_explain_method_name (i)))
      {
        *m = i;
        return TRUE;
      }
  return FALSE;
}

void
nl_explanation_clear (NlExplanation *x)
{
  g_clear_pointer (&x->map, g_free);
  g_clear_pointer (&x->scores, g_free);
}

void
nl_explainer_free (NlExplainer *e)
{
  if (!e)
    return;
  g_clear_pointer (&e->prog, nl_program_free);
  g_clear_pointer (&e->batch, nl_program_free);
  g_strfreev (e->class_names);
  nl_run_model_clear (&e->l);
  g_free (e);
}

/* The graph node whose id is `id`, or -1. */
int
nl_explainer_find_node (NlExplainer *e, const char *id)
{
  const NlGraph *g = nl_program_get_graph (e->prog);
  for (guint i = 0; i < g->nodes->len; i++)
    if (!g_strcmp0 (nl_graph_node (g, i)->id, id))
      return (int) i;
  return -1;
}

/* The value holding d(score)/d(output of graph node i), or -1. */
int
nl_explainer_grad_value (NlExplainer *e, int node)
{
  const NlGraph *g = nl_program_get_graph (e->prog);
  if (nl_graph_node (g, node)->out == g->pred_value)
    return g->head_grad_value;
  for (guint v = 0; v < g->values->len; v++)
    if (nl_graph_value (g, v)->kind == NL_VALUE_GRAD && nl_graph_value (g, v)->node == node)
      return (int) v;
  return -1;
}

gboolean
nl_explainer_unknown_layer (NlExplainer *e, const char *layer, GError **error)
{
  g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
               "run %" G_GINT64_FORMAT "'s network has no node '%s'", e->run, layer);
  return FALSE;
}

NlExplainer *
nl_explainer_new (NlProject *p, gint64 run, const char *which, GError **error)
{
  g_autoptr (NlExplainer) e = g_new0 (NlExplainer, 1);
  g_autoptr (GError) local = NULL;
  NlCompileOptions opts = { .batch = 1, .explain = TRUE, .naive_memory = TRUE };
  const NlGraph *g;
  int64_t C;

  g_return_val_if_fail (p != NULL, NULL);
  e->run = run;
  if (!nl_run_model_load (&e->l, p, run, which, NULL, FALSE, error))
    return NULL;
  opts.device = e->l.model->backend->device;
  if (!(e->prog = nl_program_new (e->l.model, &opts, &local)))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local),
                                  "run %" G_GINT64_FORMAT "'s network cannot be explained: ", run);
      return NULL;
    }
  g = nl_program_get_graph (e->prog);
  C = nl_tensor_numel (nl_program_pred (e->prog));
  if (C < 2)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "run %" G_GINT64_FORMAT "'s network outputs %" G_GINT64_FORMAT " value per sample: explaining "
                   "needs one score per class", run, C);
      return NULL;
    }
  e->n_classes = (int) C;
  {
    int node = nl_graph_value (g, g->pred_value)->node;
    const char *op = node >= 0 ? nl_graph_node (g, node)->def->name : "";
    e->out_kind = !strcmp (op, "Softmax") ? NL_OUT_PROBS : !strcmp (op, "LogSoftmax") ? NL_OUT_LOG_PROBS : NL_OUT_LOGITS;
  }
  e->input_node = -1;
  for (guint i = 0; i < g->nodes->len; i++)
    if (!strcmp (nl_graph_node (g, i)->def->name, "Input"))
      e->input_node = (int) i;
  e->class_names = g_new0 (char *, e->n_classes + 1);
  for (int c = 0; c < e->n_classes; c++)
    {
      const NlDataset *ds = e->l.ds;
      gboolean named = ds && ds->class_names && c < (int) g_strv_length (ds->class_names);
      e->class_names[c] = named ? g_strdup (ds->class_names[c]) : g_strdup_printf ("%d", c);
    }
  return g_steal_pointer (&e);
}

NlShape
nl_explainer_sample_shape (const NlExplainer *e)
{
  return e->l.sample_shape;
}

const char *const *
nl_explainer_class_names (const NlExplainer *e)
{
  return (const char *const *) e->class_names;
}

gboolean
nl_explainer_read_image (NlExplainer *e, const char *path, float **sample, float **seen, GError **error)
{
  int64_t numel = nl_shape_numel (&e->l.sample_shape);
  g_autofree float *x = g_new0 (float, numel), *s = seen ? g_new0 (float, numel) : NULL;
  if (!nl_image_file_read_sample (path, &e->l.sample_shape, e->l.rc.mean, e->l.rc.std, x, s, error))
    return FALSE;
  *sample = g_steal_pointer (&x);
  if (seen)
    *seen = g_steal_pointer (&s);
  return TRUE;
}

/* Probabilities of one row of the network's outputs (as nl-evaluate.c). */
void
nl_explainer_probs (NlExplainer *e, const float *x, float *out)
{
  int C = e->n_classes;
  double max = -INFINITY, sum = 0;
  g_autofree double *p = g_new (double, C);
  if (e->out_kind == NL_OUT_PROBS)
    {
      for (int j = 0; j < C; j++)
        sum += p[j] = MAX (x[j], 0.0f);
      for (int j = 0; j < C; j++)
        out[j] = (float) (sum > 0 ? p[j] / sum : 1.0 / C);
      return;
    }
  for (int j = 0; j < C; j++)
    max = MAX (max, (double) x[j]);
  for (int j = 0; j < C; j++)
    sum += p[j] = e->out_kind == NL_OUT_LOG_PROBS ? exp ((double) x[j]) : exp ((double) x[j] - max);
  for (int j = 0; j < C; j++)
    out[j] = (float) (p[j] / sum);
}

/* The sample through the explain program's forward: scores, predicted
 * and target class into out. */
gboolean
nl_explainer_forward (NlExplainer *e, const float *sample, int target, NlExplanation *out, GError **error)
{
  const float *pred;
  memcpy (nl_tensor_f32 (nl_program_input (e->prog)), sample,
          sizeof (float) * nl_tensor_numel (nl_program_input (e->prog)));
  if (!nl_program_forward (e->prog, 0, error))
    return FALSE;
  pred = nl_tensor_f32 (nl_program_pred (e->prog));
  out->n_classes = e->n_classes;
  out->scores = g_new (float, e->n_classes);
  nl_explainer_probs (e, pred, out->scores);
  out->predicted = (int) nl_metric_argmax (pred, e->n_classes);
  if (target >= e->n_classes || target < -1)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "class %d is not one of the %d classes of run %" G_GINT64_FORMAT " (0 to %d)", target,
                   e->n_classes, e->run, e->n_classes - 1);
      return FALSE;
    }
  out->target = target >= 0 ? target : out->predicted;
  return TRUE;
}

/* Forward, then backward from a head gradient one-hot on the target. */
static gboolean
gradients (NlExplainer *e, const float *sample, int target, NlExplanation *out, GError **error)
{
  const NlGraph *g = nl_program_get_graph (e->prog);
  NlTensor *head;
  if (!nl_explainer_forward (e, sample, target, out, error))
    return FALSE;
  head = nl_program_value (e->prog, g->head_grad_value);
  memset (nl_tensor_f32 (head), 0, sizeof (float) * nl_tensor_numel (head));
  nl_tensor_f32 (head)[out->target] = 1.0f;
  return nl_program_backward (e->prog, error);
}

/* Divides by the maximum (nothing when every value is 0). */
void
nl_explain_normalise (float *map, int64_t n)
{
  float max = 0;
  for (int64_t i = 0; i < n; i++)
    max = MAX (max, map[i]);
  if (max > 0)
    for (int64_t i = 0; i < n; i++)
      map[i] /= max;
}

/* The input's spatial size: (C, H, W) -> H x W; (H, W) -> H x W; (F) -> 1 x F. */
void
nl_explainer_input_hw (NlExplainer *e, int *h, int *w)
{
  const NlShape *s = &e->l.sample_shape;
  *h = s->ndim >= 2 ? (int) s->d[s->ndim - 2] : 1;
  *w = s->ndim >= 1 ? (int) s->d[s->ndim - 1] : 1;
}

/* |d score / d input|, max over channels; or per token the L2 norm of the
 * gradient at the embedding, when the input itself takes none (token ids). */
static gboolean
saliency (NlExplainer *e, const float *sample, const NlExplainOptions *o, NlExplanation *out, GError **error)
{
  const NlGraph *g = nl_program_get_graph (e->prog);
  int gv = e->input_node >= 0 ? nl_explainer_grad_value (e, e->input_node) : -1;
  NlShape s;
  const float *d;
  int64_t plane;
  int channels;

  if (!gradients (e, sample, o->target_class, out, error))
    return FALSE;
  if (gv >= 0)
    {
      s = nl_graph_value (g, gv)->shape;
      d = nl_tensor_f32 (nl_program_value (e->prog, gv));
      nl_explainer_input_hw (e, &out->height, &out->width);
      plane = (int64_t) out->height * out->width;
      channels = (int) (nl_shape_numel (&s) / plane);
      out->map = g_new0 (float, plane);
      for (int c = 0; c < channels; c++)
        for (int64_t k = 0; k < plane; k++)
          out->map[k] = MAX (out->map[k], fabsf (d[c * plane + k]));
      nl_explain_normalise (out->map, plane);
      return TRUE;
    }
  /* token ids: the first consumer of the input with a gradient (the Embedding) */
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *n = nl_graph_node (g, i);
      int v = nl_explainer_grad_value (e, (int) i);
      if (e->input_node < 0 || n->in[0] != nl_graph_node (g, e->input_node)->out || v < 0)
        continue;
      s = nl_graph_value (g, v)->shape;
      d = nl_tensor_f32 (nl_program_value (e->prog, v));
      out->height = 1;
      out->width = s.ndim >= 2 ? (int) s.d[1] : 1;
      plane = nl_shape_numel (&s) / out->width;
      out->map = g_new0 (float, out->width);
      for (int t = 0; t < out->width; t++)
        {
          double sq = 0;
          for (int64_t k = 0; k < plane; k++)
            sq += (double) d[t * plane + k] * d[t * plane + k];
          out->map[t] = (float) sqrt (sq);
        }
      nl_explain_normalise (out->map, out->width);
      return TRUE;
    }
  g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
               "run %" G_GINT64_FORMAT "'s network passes no gradient back to its input: no saliency", e->run);
  return FALSE;
}

/* PyTorch's bilinear resize (align_corners=False) of src (sh x sw) to dst (dh x dw). */
void
nl_explain_resize_bilinear (const float *src, int sh, int sw, float *dst, int dh, int dw)
{
  for (int y = 0; y < dh; y++)
    {
      double fy = MAX ((y + 0.5) * sh / dh - 0.5, 0.0);
      int y0 = (int) fy, y1 = MIN (y0 + 1, sh - 1);
      double ly = fy - y0;
      for (int x = 0; x < dw; x++)
        {
          double fx = MAX ((x + 0.5) * sw / dw - 0.5, 0.0);
          int x0 = (int) fx, x1 = MIN (x0 + 1, sw - 1);
          double lx = fx - x0;
          dst[y * dw + x] = (float) ((1 - ly) * ((1 - lx) * src[y0 * sw + x0] + lx * src[y0 * sw + x1])
                                     + ly * ((1 - lx) * src[y1 * sw + x0] + lx * src[y1 * sw + x1]));
        }
    }
}

/* The deepest Conv2D: the most nodes on a path from the input (the last
 * in execution order among equals), so that in a residual block the main
 * branch's convolution wins over the shortcut's, which may run after it. */
static int
last_conv (NlExplainer *e)
{
  const NlGraph *g = nl_program_get_graph (e->prog);
  g_autofree int *depth = g_new0 (int, g->nodes->len);
  int node = -1;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *n = nl_graph_node (g, i);
      for (int p = 0; p < n->n_data; p++)
        {
          int from = nl_graph_value (g, n->in[p])->node;
          if (from >= 0 && nl_graph_value (g, n->in[p])->kind == NL_VALUE_ACTIVATION)
            depth[i] = MAX (depth[i], depth[from] + 1);
        }
      if (!strcmp (n->def->name, "Conv2D") && (node < 0 || depth[i] >= depth[node]))
        node = (int) i;
    }
  return node;
}

const char *
nl_explainer_default_layer (NlExplainer *e)
{
  int node = last_conv (e);
  return node >= 0 ? nl_graph_node (nl_program_get_graph (e->prog), node)->id : NULL;
}

/* The Grad-CAM layer: o->layer, else the last Conv2D; its output must be
 * (1, C, H, W). */
static int
gradcam_layer (NlExplainer *e, const char *layer, GError **error)
{
  const NlGraph *g = nl_program_get_graph (e->prog);
  int node = -1;
  char buf[96];
  if (layer && (node = nl_explainer_find_node (e, layer)) < 0)
    {
      nl_explainer_unknown_layer (e, layer, error);
      return -1;
    }
  if (!layer)
    node = last_conv (e);
  if (node < 0)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "run %" G_GINT64_FORMAT "'s network has no Conv2D for Grad-CAM: choose a layer", e->run);
      return -1;
    }
  if (nl_graph_value (g, nl_graph_node (g, node)->out)->shape.ndim != 4 || e->l.sample_shape.ndim != 3)
    {
      /* the shape of one sample: the batch dimension left out */
      NlShape s = nl_graph_value (g, nl_graph_node (g, node)->out)->shape;
      NlShape per = nl_shape_make (s.ndim - 1, s.d + 1);
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "layer '%s' outputs %s per sample, not feature maps (channels, height, width) of an image: "
                   "Grad-CAM needs a spatial layer", nl_graph_node (g, node)->id, nl_shape_format (&per, buf, sizeof buf));
      return -1;
    }
  if (nl_explainer_grad_value (e, node) < 0)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "layer '%s' gets no gradient from the output",
                   nl_graph_node (g, node)->id);
      return -1;
    }
  return node;
}

/* ReLU(sum_c w_c A_c), w_c the spatial mean of dscore/dA_c, resized to the input. */
static gboolean
gradcam (NlExplainer *e, const float *sample, const NlExplainOptions *o, NlExplanation *out, GError **error)
{
  const NlGraph *g = nl_program_get_graph (e->prog);
  int node = gradcam_layer (e, o->layer, error);
  NlShape s;
  const float *a, *d;
  g_autofree float *cam = NULL;
  int64_t plane;

  if (node < 0 || !gradients (e, sample, o->target_class, out, error))
    return FALSE;
  s = nl_graph_value (g, nl_graph_node (g, node)->out)->shape;
  a = nl_tensor_f32 (nl_program_value (e->prog, nl_graph_node (g, node)->out));
  d = nl_tensor_f32 (nl_program_value (e->prog, nl_explainer_grad_value (e, node)));
  plane = s.d[2] * s.d[3];
  cam = g_new0 (float, plane);
  for (int64_t c = 0; c < s.d[1]; c++)
    {
      double wsum = 0;
      for (int64_t k = 0; k < plane; k++)
        wsum += d[c * plane + k];
      for (int64_t k = 0; k < plane; k++)
        cam[k] += (float) (wsum / plane) * a[c * plane + k];
    }
  for (int64_t k = 0; k < plane; k++)
    cam[k] = MAX (cam[k], 0.0f);
  nl_explainer_input_hw (e, &out->height, &out->width);
  out->map = g_new0 (float, (gsize) out->height * out->width);
  nl_explain_resize_bilinear (cam, (int) s.d[2], (int) s.d[3], out->map, out->height, out->width);
  nl_explain_normalise (out->map, (int64_t) out->height * out->width);
  return TRUE;
}

gboolean
nl_explainer_explain (NlExplainer *e, const float *sample, const NlExplainOptions *o, NlExplanation *out,
                      GError **error)
{
  gboolean ok;
  g_return_val_if_fail (e != NULL && sample != NULL && o != NULL && out != NULL, FALSE);
  memset (out, 0, sizeof *out);
  switch (o->method)
    {
    case NL_EXPLAIN_SALIENCY:
      ok = saliency (e, sample, o, out, error);
      break;
    case NL_EXPLAIN_GRADCAM:
      ok = gradcam (e, sample, o, out, error);
      break;
    case NL_EXPLAIN_OCCLUSION:
      ok = nl_explainer_occlusion (e, sample, o, out, error);
      break;
    default:
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "unknown explanation method %d", o->method);
      ok = FALSE;
    }
  if (!ok)
    nl_explanation_clear (out);
  return ok;
}

float *
nl_explainer_activations (NlExplainer *e, const float *sample, const char *layer, int *c, int *h, int *w,
                          GError **error)
{
  const NlGraph *g = nl_program_get_graph (e->prog);
  NlExplanation tmp = { 0 };
  int node = layer ? nl_explainer_find_node (e, layer) : -1;
  NlShape s;
  gboolean ok;

  g_return_val_if_fail (e != NULL && sample != NULL && c && h && w, NULL);
  if (node < 0)
    {
      nl_explainer_unknown_layer (e, layer ? layer : "(none)", error);
      return NULL;
    }
  ok = nl_explainer_forward (e, sample, -1, &tmp, error);
  nl_explanation_clear (&tmp);
  if (!ok)
    return NULL;
  s = nl_graph_value (g, nl_graph_node (g, node)->out)->shape;
  *c = s.ndim >= 4 ? (int) s.d[1] : 1;
  *h = s.ndim >= 4 ? (int) s.d[2] : s.ndim == 3 ? (int) s.d[1] : 1;
  *w = (int) (nl_shape_numel (&s) / ((int64_t) *c * *h));
  return g_memdup2 (nl_tensor_f32 (nl_program_value (e->prog, nl_graph_node (g, node)->out)),
                    sizeof (float) * nl_shape_numel (&s));
}
