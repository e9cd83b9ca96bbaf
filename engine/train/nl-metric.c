/* nl-metric.c — Gluon-style evaluation metrics. Every metric keeps sums
 * (in double) and counts, never per-batch averages, so accumulating over
 * updates equals one update of the concatenated batches. F-beta keeps
 * per-class confusion counts and derives the score in get(). */
#include "engine/train/nl-metric.h"
#include "core/nl-comm.h"
#include "core/nl-spec.h"

#include <gio/gio.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
  K_ACCURACY,
  K_TOP_K,
  K_CROSS_ENTROPY,
  K_PERPLEXITY,
  K_BINARY_ACCURACY,
  K_FBETA,
  K_MAE,
  K_MSE,
  K_RMSE,
  K_COSINE,
  K_PAIRWISE,
} Kind;

typedef enum { AVG_AUTO, AVG_BINARY, AVG_MICRO, AVG_MACRO } Average;

struct NlMetric {
  Kind kind;
  char *name;
  int top_k;
  double arg;        /* binary_accuracy threshold, F beta, pairwise p */
  Average average;
  double sum;
  int64_t count;     /* samples (or rows, or elements) seen */
  /* F-beta: per-class true positives, false positives, false negatives */
  int64_t *tp, *fp, *fn;
  int n_classes;
};

#define CE_EPS 1e-12
#define COSINE_EPS 1e-12

static const char valid_specs[] =
  "accuracy, top_k_accuracy[:K], cross_entropy, perplexity, binary_accuracy[:THRESHOLD], "
  "f1[:binary|micro|macro], fbeta:BETA[:binary|micro|macro], mae, mse, rmse, "
  "mean_cosine_similarity, mean_pairwise_distance[:P]";

static const struct {
  const char *name;
  Kind kind;
  int min_args, max_args;
} kinds[] = {
  { "accuracy", K_ACCURACY, 0, 0 },
  { "top_k_accuracy", K_TOP_K, 0, 1 },
  { "cross_entropy", K_CROSS_ENTROPY, 0, 0 },
  { "perplexity", K_PERPLEXITY, 0, 0 },
  { "binary_accuracy", K_BINARY_ACCURACY, 0, 1 },
  { "f1", K_FBETA, 0, 1 },
  { "fbeta", K_FBETA, 1, 2 },
  { "mae", K_MAE, 0, 0 },
  { "mse", K_MSE, 0, 0 },
  { "rmse", K_RMSE, 0, 0 },
  { "mean_cosine_similarity", K_COSINE, 0, 0 },
  { "mean_pairwise_distance", K_PAIRWISE, 0, 1 },
};

static gboolean
parse_average (const char *text, Average *out)
{
  static const char *const names[] = { "binary", "micro", "macro" };
  for (int i = 0; i < 3; i++)
    if (strcmp (text, names[i]) == 0)
      {
        *out = AVG_BINARY + i;
        return TRUE;
      }
  return FALSE;
}

static NlMetric *
bad_spec (GError **error, const char *spec, const char *why)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
               "bad metric '%s': %s; valid metrics: %s", spec, why, valid_specs);
  return NULL;
}

NlMetric *
nl_metric_new (const char *spec, GError **error)
{
  g_autofree char *clean = NULL;
  g_auto (GStrv) parts = NULL;
  g_autoptr (NlMetric) m = NULL;
  int n_args, k;

  g_return_val_if_fail (spec != NULL, NULL);
  clean = g_ascii_strdown (spec, -1);
  g_strstrip (clean);
  parts = g_strsplit (clean, ":", -1);
  n_args = (int) g_strv_length (parts) - 1;
  if (n_args < 0)
    return bad_spec (error, spec, "empty name");
  for (k = 0; k < (int) G_N_ELEMENTS (kinds); k++)
    if (strcmp (parts[0], kinds[k].name) == 0)
      break;
  if (k == (int) G_N_ELEMENTS (kinds))
    return bad_spec (error, spec, "unknown name");
  if (n_args < kinds[k].min_args || n_args > kinds[k].max_args)
    return bad_spec (error, spec, kinds[k].min_args > 0 ? "missing argument" : "too many arguments");

  m = g_new0 (NlMetric, 1);
  m->kind = kinds[k].kind;
  switch (m->kind)
    {
    case K_TOP_K:
      {
        char *end;
        long long v = 5;
        if (n_args == 1)
          {
            v = strtoll (parts[1], &end, 10);
            if (*parts[1] == '\0' || *end != '\0' || v < 1 || v > G_MAXINT)
              return bad_spec (error, spec, "K must be a whole number >= 1");
          }
        m->top_k = (int) v;
        m->name = g_strdup_printf ("top_%d_accuracy", m->top_k);
      }
      break;
    case K_BINARY_ACCURACY:
      m->arg = 0.5;
      if (n_args == 1 && !nl_parse_double (parts[1], &m->arg))
        return bad_spec (error, spec, "the threshold must be a number");
      break;
    case K_FBETA:
      {
        int avg_at = 1;
        m->arg = 1;
        if (strcmp (parts[0], "fbeta") == 0)
          {
            if (!nl_parse_double (parts[1], &m->arg) || m->arg <= 0)
              return bad_spec (error, spec, "beta must be a number > 0");
            avg_at = 2;
          }
        if (n_args >= avg_at && !parse_average (parts[avg_at], &m->average))
          return bad_spec (error, spec, "the average must be binary, micro or macro");
      }
      break;
    case K_PAIRWISE:
      m->arg = 2;
      if (n_args == 1 && (!nl_parse_double (parts[1], &m->arg) || m->arg <= 0))
        return bad_spec (error, spec, "p must be a number > 0");
      break;
    default:
      break;
    }
  if (!m->name)
    m->name = g_strdup (parts[0]);
  return g_steal_pointer (&m);
}

void
nl_metric_free (NlMetric *m)
{
  if (!m)
    return;
  g_free (m->tp);
  g_free (m->fp);
  g_free (m->fn);
  g_free (m->name);
  g_free (m);
}

void
nl_metric_reset (NlMetric *m)
{
  g_return_if_fail (m != NULL);
  m->sum = 0;
  m->count = 0;
  g_clear_pointer (&m->tp, g_free);
  g_clear_pointer (&m->fp, g_free);
  g_clear_pointer (&m->fn, g_free);
  m->n_classes = 0;
}

void
nl_metric_get_totals (const NlMetric *m, double *sum, int64_t *count)
{
  g_return_if_fail (m != NULL);
  *sum = m->sum;
  *count = m->count;
}

void
nl_metric_set_totals (NlMetric *m, double sum, int64_t count)
{
  g_return_if_fail (m != NULL && count >= 0);
  m->sum = sum;
  m->count = count;
}

const char *
nl_metric_name (const NlMetric *m)
{
  g_return_val_if_fail (m != NULL, NULL);
  return m->name;
}

gboolean
nl_metric_higher_is_better (const NlMetric *m)
{
  g_return_val_if_fail (m != NULL, FALSE);
  switch (m->kind)
    {
    case K_ACCURACY:
    case K_TOP_K:
    case K_BINARY_ACCURACY:
    case K_FBETA:
    case K_COSINE:
      return TRUE;
    default:
      return FALSE;
    }
}

static double
fbeta_of (double b2, int64_t tp, int64_t fp, int64_t fn)
{
  /* (1 + b^2) P R / (b^2 P + R), written on counts; 0 when undefined */
  double den = (1 + b2) * (double) tp + b2 * (double) fn + (double) fp;
  return den > 0 ? (1 + b2) * (double) tp / den : 0.0;
}

static double
fbeta_get (const NlMetric *m)
{
  double b2 = m->arg * m->arg;
  Average avg = m->average;

  if (avg == AVG_AUTO)
    avg = m->n_classes <= 2 ? AVG_BINARY : AVG_MACRO;
  if (avg == AVG_BINARY)
    return m->n_classes > 1 ? fbeta_of (b2, m->tp[1], m->fp[1], m->fn[1]) : 0.0;
  if (avg == AVG_MICRO)
    {
      int64_t tp = 0, fp = 0, fn = 0;
      for (int c = 0; c < m->n_classes; c++)
        {
          tp += m->tp[c];
          fp += m->fp[c];
          fn += m->fn[c];
        }
      return fbeta_of (b2, tp, fp, fn);
    }
  else
    {
      double s = 0;
      int n = 0;
      for (int c = 0; c < m->n_classes; c++)
        if (m->tp[c] + m->fp[c] + m->fn[c] > 0)
          {
            s += fbeta_of (b2, m->tp[c], m->fp[c], m->fn[c]);
            n++;
          }
      return n > 0 ? s / n : 0.0;
    }
}

double
nl_metric_get (const NlMetric *m)
{
  double mean;

  g_return_val_if_fail (m != NULL, NAN);
  if (m->count == 0)
    return NAN;
  mean = m->sum / (double) m->count;
  switch (m->kind)
    {
    case K_PERPLEXITY:
      return exp (mean);
    case K_RMSE:
      return sqrt (mean);
    case K_FBETA:
      return fbeta_get (m);
    default:
      return mean;
    }
}

/* ---- update ------------------------------------------------------------ */

static void G_GNUC_PRINTF (2, 3)
reject (const NlMetric *m, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;
  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_critical ("nl_metric_update (%s): %s", m->name, msg);
}

static void
reject_shapes (const NlMetric *m, const NlTensor *labels, const NlTensor *preds, const char *want)
{
  NlShape ls = nl_tensor_get_shape (labels), ps = nl_tensor_get_shape (preds);
  char a[96], b[96];
  reject (m, "labels %s do not fit preds %s (%s)",
          nl_shape_format (&ls, a, sizeof a), nl_shape_format (&ps, b, sizeof b), want);
}

static inline gboolean
is_class (float v, int64_t C)
{
  return v >= 0 && v < (float) C && v == floorf (v);
}

/* Preds (rows, C) against one label per row; C from preds' last dim. */
static gboolean
class_layout (const NlMetric *m, const NlTensor *labels, const NlTensor *preds, int64_t *C_out)
{
  int64_t nl = nl_tensor_numel (labels), np = nl_tensor_numel (preds);
  int64_t C = preds->ndim >= 2 ? preds->shape[preds->ndim - 1] : 0;

  if (C < 1 || np / C != nl)
    {
      reject_shapes (m, labels, preds, "expected preds (N, C) and labels (N) of class indices");
      return FALSE;
    }
  *C_out = C;
  return TRUE;
}

static gboolean
check_class_labels (const NlMetric *m, const float *l, int64_t n, int64_t C)
{
  for (int64_t i = 0; i < n; i++)
    if (!is_class (l[i], C))
      {
        reject (m, "label %" G_GINT64_FORMAT " is %g, not a class index in 0 .. %" G_GINT64_FORMAT,
                i, l[i], C - 1);
        return FALSE;
      }
  return TRUE;
}

static void
grow_classes (NlMetric *m, int C)
{
  if (C <= m->n_classes)
    return;
  m->tp = g_renew (int64_t, m->tp, C);
  m->fp = g_renew (int64_t, m->fp, C);
  m->fn = g_renew (int64_t, m->fn, C);
  for (int c = m->n_classes; c < C; c++)
    m->tp[c] = m->fp[c] = m->fn[c] = 0;
  m->n_classes = C;
}

static void
update_fbeta (NlMetric *m, const NlTensor *labels, const NlTensor *preds)
{
  const float *l = nl_tensor_f32 (labels), *p = nl_tensor_f32 (preds);
  int64_t n = nl_tensor_numel (labels), C;
  gboolean one_column = nl_tensor_numel (preds) == n;

  /* one column: probabilities of class 1 */
  if (one_column)
    C = 2;
  else if (!class_layout (m, labels, preds, &C))
    return;
  if (m->average == AVG_BINARY && C > 2)
    {
      reject (m, "binary F-score needs one- or two-column preds, got %" G_GINT64_FORMAT " classes "
              "(use :micro or :macro)", C);
      return;
    }
  if (C > G_MAXINT || !check_class_labels (m, l, n, C))
    return;
  grow_classes (m, (int) C);
  for (int64_t i = 0; i < n; i++)
    {
      int64_t y = (int64_t) l[i];
      int64_t k = one_column ? p[i] > 0.5f : nl_metric_argmax (p + i * C, C);
      if (k == y)
        m->tp[k]++;
      else
        {
          m->fp[k]++;
          m->fn[y]++;
        }
    }
  m->count += n;
}

/* preds of class scores, or class indices already */
static void
update_accuracy (NlMetric *m, const NlTensor *labels, const NlTensor *preds)
{
  const float *l = nl_tensor_f32 (labels), *p = nl_tensor_f32 (preds);
  int64_t nl = nl_tensor_numel (labels), np = nl_tensor_numel (preds);
  int64_t C, correct = 0;
  if (np == nl) /* preds are class indices already */
    {
      for (int64_t i = 0; i < nl; i++)
        correct += nearbyintf (p[i]) == l[i];
    }
  else
    {
      if (!class_layout (m, labels, preds, &C))
        return;
      for (int64_t i = 0; i < nl; i++)
        correct += (float) nl_metric_argmax (p + i * C, C) == l[i];
    }
  m->sum += (double) correct;
  m->count += nl;
}

/* the label among the top_k scores */
static void
update_top_k (NlMetric *m, const NlTensor *labels, const NlTensor *preds)
{
  const float *l = nl_tensor_f32 (labels), *p = nl_tensor_f32 (preds);
  int64_t nl = nl_tensor_numel (labels);
  int64_t C, correct = 0;
  if (!class_layout (m, labels, preds, &C))
    return;
  for (int64_t i = 0; i < nl; i++)
    {
      const float *x = p + i * C;
      int64_t y = (int64_t) l[i], rank = 0;
      if (!is_class (l[i], C))
        continue; /* not a class of these preds: never correct */
      /* classes ranked before y: higher score, or equal with a lower index */
      for (int64_t j = 0; j < C && rank < m->top_k; j++)
        rank += x[j] > x[y] || (x[j] == x[y] && j < y);
      correct += rank < m->top_k;
    }
  m->sum += (double) correct;
  m->count += nl;
}

/* cross entropy, and perplexity its exponential */
static void
update_cross_entropy (NlMetric *m, const NlTensor *labels, const NlTensor *preds)
{
  const float *l = nl_tensor_f32 (labels), *p = nl_tensor_f32 (preds);
  int64_t nl = nl_tensor_numel (labels);
  int64_t C;
  double s = 0;
  if (!class_layout (m, labels, preds, &C) || !check_class_labels (m, l, nl, C))
    return;
  for (int64_t i = 0; i < nl; i++)
    s -= log ((double) p[i * C + (int64_t) l[i]] + CE_EPS);
  m->sum += s;
  m->count += nl;
}

/* one probability per label, against a threshold */
static void
update_binary_accuracy (NlMetric *m, const NlTensor *labels, const NlTensor *preds)
{
  const float *l = nl_tensor_f32 (labels), *p = nl_tensor_f32 (preds);
  int64_t nl = nl_tensor_numel (labels), np = nl_tensor_numel (preds);
  int64_t correct = 0;
  if (np != nl)
    {
      reject_shapes (m, labels, preds, "expected one probability per label");
      return;
    }
  for (int64_t i = 0; i < nl; i++)
    correct += (p[i] > m->arg) == (l[i] > 0.5f);
  m->sum += (double) correct;
  m->count += nl;
}

/* mean absolute or squared error per sample, or its p-norm (pairwise) */
static void
update_distance (NlMetric *m, const NlTensor *labels, const NlTensor *preds)
{
  const float *l = nl_tensor_f32 (labels), *p = nl_tensor_f32 (preds);
  int64_t nl = nl_tensor_numel (labels), np = nl_tensor_numel (preds);
  int64_t N, D;
  double s = 0;
  if (np != nl || labels->ndim < 1 || preds->ndim < 1 || labels->shape[0] != preds->shape[0]
      || nl == 0)
    {
      reject_shapes (m, labels, preds, "expected the same number of values and samples");
      return;
    }
  N = labels->shape[0];
  D = nl / N;
  for (int64_t n = 0; n < N; n++)
    {
      double acc = 0;
      for (int64_t i = n * D; i < (n + 1) * D; i++)
        {
          double d = fabs ((double) p[i] - (double) l[i]);
          acc += m->kind == K_MAE ? d
                 : m->kind != K_PAIRWISE || m->arg == 2 ? d * d
                 : pow (d, m->arg);
        }
      if (m->kind == K_PAIRWISE)
        s += m->arg == 2 ? sqrt (acc) : pow (acc, 1.0 / m->arg);
      else
        s += acc / (double) D;
    }
  m->sum += s;
  m->count += N;
}

/* cosine similarity along the last dimension, per row */
static void
update_cosine (NlMetric *m, const NlTensor *labels, const NlTensor *preds)
{
  const float *l = nl_tensor_f32 (labels), *p = nl_tensor_f32 (preds);
  int64_t nl = nl_tensor_numel (labels), np = nl_tensor_numel (preds);
  int64_t D = preds->ndim >= 1 ? preds->shape[preds->ndim - 1] : 0;
  double s = 0;
  if (np != nl || D < 1 || labels->ndim < 1 || labels->shape[labels->ndim - 1] != D)
    {
      reject_shapes (m, labels, preds, "expected the same shape");
      return;
    }
  for (int64_t r = 0; r < nl / D; r++)
    {
      double dot = 0, ll = 0, pp = 0;
      for (int64_t i = r * D; i < (r + 1) * D; i++)
        {
          dot += (double) l[i] * p[i];
          ll += (double) l[i] * l[i];
          pp += (double) p[i] * p[i];
        }
      s += dot / fmax (sqrt (ll) * sqrt (pp), COSINE_EPS);
    }
  m->sum += s;
  m->count += nl / D;
}

void
nl_metric_update (NlMetric *m, const NlTensor *labels, const NlTensor *preds)
{
  g_return_if_fail (m != NULL && labels != NULL && preds != NULL);
  g_return_if_fail (labels->dtype == NL_DTYPE_F32 && preds->dtype == NL_DTYPE_F32);
  g_return_if_fail (nl_tensor_is_contiguous (labels) && nl_tensor_is_contiguous (preds));
  switch (m->kind)
    {
    case K_ACCURACY:
      update_accuracy (m, labels, preds);
      break;
    case K_TOP_K:
      update_top_k (m, labels, preds);
      break;
    case K_CROSS_ENTROPY:
    case K_PERPLEXITY:
      update_cross_entropy (m, labels, preds);
      break;
    case K_BINARY_ACCURACY:
      update_binary_accuracy (m, labels, preds);
      break;
    case K_FBETA:
      update_fbeta (m, labels, preds);
      break;
    case K_MAE:
    case K_MSE:
    case K_RMSE:
    case K_PAIRWISE:
      update_distance (m, labels, preds);
      break;
    case K_COSINE:
      update_cosine (m, labels, preds);
      break;
    }
}

gboolean
nl_metric_reduce (NlMetric *m, NlComm *comm, GError **error)
{
  double classes;
  g_autofree double *all = NULL;
  int C;

  if (!comm || comm->size <= 1)
    return TRUE;
  /* F-beta's per-class counts grow with the classes seen: to the largest */
  classes = m->n_classes;
  if (!nl_comm_allreduce_max_f64 (comm, &classes, 1, error))
    return FALSE;
  C = (int) classes;
  grow_classes (m, C);
  all = g_new (double, 2 + 3 * (gsize) C);
  all[0] = m->sum;
  all[1] = (double) m->count;
  for (int c = 0; c < C; c++)
    {
      all[2 + c] = (double) m->tp[c];
      all[2 + C + c] = (double) m->fp[c];
      all[2 + 2 * C + c] = (double) m->fn[c];
    }
  if (!nl_comm_allreduce_f64 (comm, all, 2 + 3 * (int64_t) C, error))
    return FALSE;
  m->sum = all[0];
  m->count = (int64_t) all[1];
  for (int c = 0; c < C; c++)
    {
      m->tp[c] = (int64_t) all[2 + c];
      m->fp[c] = (int64_t) all[2 + C + c];
      m->fn[c] = (int64_t) all[2 + 2 * C + c];
    }
  return TRUE;
}
