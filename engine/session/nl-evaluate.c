/* nl-evaluate.c — a checkpoint's confusion matrix, per-class scores, most
 * confident mistakes, and single-image predictions. */
#include "engine/session/nl-evaluate.h"
#include "engine/data/nl-loader.h"
#include "engine/formats/nl-checkpoint.h"
#include "engine/session/nl-run-model.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* How the network's output becomes probabilities. */
typedef enum { OUT_LOGITS, OUT_PROBS, OUT_LOG_PROBS } OutKind;

struct NlEvaluationPrivate {
  NlNetwork *net;
  NlModel *model;
  NlDataset *ds;          /* the evaluated split; NULL for a bare predictor */
  NlProgram *single;      /* batch 1, for image files; built on demand */
  OutKind out_kind;
  GMutex lock;            /* single and the model's forward passes */
};

/* ---- the model of a run's checkpoint ---- */

static OutKind
out_kind_of (NlProgram *prog)
{
  const NlGraph *g = nl_program_get_graph (prog);
  int node = nl_graph_value (g, g->pred_value)->node;
  const char *op;
  if (node < 0)
    return OUT_LOGITS;
  op = nl_graph_node (g, node)->def->name;
  return !strcmp (op, "Softmax") ? OUT_PROBS : !strcmp (op, "LogSoftmax") ? OUT_LOG_PROBS : OUT_LOGITS;
}

/* Probabilities of one row of C outputs into out (double). */
static void
row_probs (OutKind kind, const float *x, int64_t C, double *out)
{
  double max = -INFINITY, sum = 0;
  if (kind == OUT_PROBS)
    {
      for (int64_t j = 0; j < C; j++)
        sum += out[j] = MAX (x[j], 0.0f);
      for (int64_t j = 0; j < C; j++)
        out[j] = sum > 0 ? out[j] / sum : 1.0 / C;
      return;
    }
  for (int64_t j = 0; j < C; j++)
    max = MAX (max, (double) x[j]);
  for (int64_t j = 0; j < C; j++)
    sum += out[j] = kind == OUT_LOG_PROBS ? exp ((double) x[j]) : exp ((double) x[j] - max);
  for (int64_t j = 0; j < C; j++)
    out[j] /= sum;
}

/* The first maximum, as the accuracy metric (nl-metric.h) picks it. */
static int
argmax (const float *x, int64_t C)
{
  int best = 0;
  for (int j = 1; j < C; j++)
    if (x[j] > x[best])
      best = j;
  return best;
}

static NlProgram *
program_for (NlModel *m, int batch, GError **error)
{
  NlCompileOptions opts = { .batch = batch, .training = FALSE, .loss = NULL };
  return nl_program_new (m, &opts, error);
}

static char **
class_names_for (const NlDataset *ds, int n)
{
  char **names = g_new0 (char *, n + 1);
  int have = ds && ds->class_names ? (int) g_strv_length (ds->class_names) : 0;
  for (int c = 0; c < n; c++)
    names[c] = c < have ? g_strdup (ds->class_names[c]) : g_strdup_printf ("%d", c);
  return names;
}

/* Classes the network scores: its output's last dimension. */
static gboolean
output_classes (NlProgram *prog, int batch, gint64 run, int *n, GError **error)
{
  int64_t C = nl_tensor_numel (nl_program_pred (prog)) / batch;
  if (C < 2)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "run %" G_GINT64_FORMAT "'s network outputs %" G_GINT64_FORMAT " value per sample: a classifier "
                   "needs one score per class", run, C);
      return FALSE;
    }
  *n = (int) C;
  return TRUE;
}

/* ---- evaluation ---- */

static int
compare_mistakes (gconstpointer a, gconstpointer b)
{
  const NlMisclassified *x = a, *y = b;
  if (x->confidence != y->confidence)
    return x->confidence > y->confidence ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Precision, recall, F1 and their averages from the matrix (scikit-learn's
 * definitions with zero_division=0). */
static void
scores (NlEvaluation *ev)
{
  int n = ev->n_classes, counted = 0;
  double macro = 0, weighted = 0;
  for (int c = 0; c < n; c++)
    {
      int64_t tp = ev->confusion[c * n + c], predicted = 0, truth = 0;
      for (int k = 0; k < n; k++)
        {
          predicted += ev->confusion[k * n + c];
          truth += ev->confusion[c * n + k];
        }
      ev->support[c] = truth;
      ev->precision[c] = predicted ? (double) tp / predicted : 0;
      ev->recall[c] = truth ? (double) tp / truth : 0;
      ev->f1[c] = predicted + truth ? 2.0 * tp / (double) (predicted + truth) : 0;
      if (predicted + truth > 0)
        {
          macro += ev->f1[c];
          counted++;
        }
      weighted += ev->f1[c] * truth;
    }
  ev->macro_f1 = counted ? macro / counted : 0;
  ev->weighted_f1 = ev->n_samples ? weighted / ev->n_samples : 0;
  ev->accuracy = ev->n_samples ? (double) ev->n_correct / ev->n_samples : 0;
}

/* One batch of n predictions against their labels; first is the dataset
 * index of row 0. */
static gboolean
tally (NlEvaluation *ev, const NlTensor *pred, const float *labels, int n, int64_t first, GArray *mistakes,
       double *probs, GError **error)
{
  const float *x = nl_tensor_f32 (pred);
  int64_t C = nl_tensor_numel (pred) / nl_tensor_get_shape (pred).d[0];
  for (int i = 0; i < n; i++)
    {
      const float *row = x + i * C;
      int truth = (int) labels[i], guess = argmax (row, C);
      if (!(labels[i] >= 0 && truth < ev->n_classes && labels[i] == truth))
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                       "sample %" G_GINT64_FORMAT " has label %g, outside the %d classes", first + i,
                       labels[i], ev->n_classes);
          return FALSE;
        }
      ev->confusion[truth * ev->n_classes + guess]++;
      if (truth == guess)
        {
          ev->n_correct++;
          continue;
        }
      row_probs (ev->priv->out_kind, row, C, probs);
      NlMisclassified m = { .index = first + i, .truth = truth, .predicted = guess, .confidence = probs[guess] };
      g_array_append_val (mistakes, m);
    }
  ev->n_samples += n;
  return TRUE;
}

static void
copy_rows (NlTensor *dst, const NlTensor *src, int n)
{
  int64_t row = nl_tensor_numel (src) / src->shape[0];
  memcpy (nl_tensor_f32 (dst), nl_tensor_f32 (src), sizeof (float) * row * n);
}

/* Inference over the split in the trainer's evaluation batches. */
static gboolean
run_inference (NlEvaluation *ev, const NlRunConfig *cfg, int max_misclassified, GCancellable *cancel,
               void (*progress) (gpointer, double), gpointer user, GError **error)
{
  NlLoaderConfig lc = { .batch_size = cfg->eval_batch_size, .shuffle = FALSE, .last_batch = NL_LAST_BATCH_KEEP,
                        .num_workers = cfg->workers, .mean = cfg->mean, .std = cfg->std };
  g_autoptr (NlLoader) loader = NULL;
  g_autoptr (NlProgram) full = NULL, tail = NULL;
  g_autoptr (NlTensor) labels = NULL;
  g_autoptr (GArray) mistakes = g_array_new (FALSE, FALSE, sizeof (NlMisclassified));
  g_autofree double *probs = NULL;
  NlShape ls = nl_shape_of (1, (int64_t) MAX (cfg->eval_batch_size, 1));
  int64_t length = ev->priv->ds->length;
  gint64 start = g_get_monotonic_time ();
  int n, C;

  if (cfg->eval_batch_size < 1)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the run's evaluation batch size is %d",
                   cfg->eval_batch_size);
      return FALSE;
    }
  loader = nl_loader_new (ev->priv->ds, &lc, error);
  full = loader ? program_for (ev->priv->model, cfg->eval_batch_size, error) : NULL;
  if (!full || !output_classes (full, cfg->eval_batch_size, ev->run, &C, error))
    return FALSE;
  ev->priv->out_kind = out_kind_of (full);
  /* a network with more outputs than the dataset has classes still gets a square matrix */
  ev->n_classes = MAX (C, ev->priv->ds->n_classes);
  ev->class_names = class_names_for (ev->priv->ds, ev->n_classes);
  ev->confusion = g_new0 (int64_t, (gsize) ev->n_classes * ev->n_classes);
  ev->precision = g_new0 (double, ev->n_classes);
  ev->recall = g_new0 (double, ev->n_classes);
  ev->f1 = g_new0 (double, ev->n_classes);
  ev->support = g_new0 (int64_t, ev->n_classes);
  probs = g_new (double, C);
  labels = nl_tensor_zeros (NL_DTYPE_F32, &ls);

  nl_loader_start_epoch (loader, 0);
  while ((n = nl_loader_next (loader, nl_program_input (full), labels, error)) > 0)
    {
      NlProgram *prog = full;
      if (g_cancellable_set_error_if_cancelled (cancel, error))
        return FALSE;
      if (n < cfg->eval_batch_size)
        {
          /* the kept short last batch, through a program of its size as the trainer does */
          if (!tail && !(tail = program_for (ev->priv->model, n, error)))
            return FALSE;
          copy_rows (nl_program_input (tail), nl_program_input (full), n);
          prog = tail;
        }
      if (!nl_program_forward (prog, 0, error)
          || !tally (ev, nl_program_pred (prog), nl_tensor_f32 (labels), n, ev->n_samples, mistakes, probs, error))
        return FALSE;
      if (progress)
        progress (user, length > 0 ? (double) ev->n_samples / length : 1.0);
    }
  if (n < 0)
    return FALSE;
  ev->seconds = (g_get_monotonic_time () - start) / 1e6;
  g_array_sort (mistakes, compare_mistakes);
  if (max_misclassified >= 0 && mistakes->len > (guint) max_misclassified)
    g_array_set_size (mistakes, max_misclassified);
  ev->n_misclassified = (int) mistakes->len;
  ev->misclassified = (NlMisclassified *) g_array_free (g_steal_pointer (&mistakes), FALSE);
  scores (ev);
  return TRUE;
}

static NlEvaluation *
evaluation_new (NlRunModel *l, gint64 run)
{
  NlEvaluation *ev = g_new0 (NlEvaluation, 1);
  ev->priv = g_new0 (NlEvaluationPrivate, 1);
  g_mutex_init (&ev->priv->lock);
  ev->run = run;
  ev->checkpoint = l->checkpoint;
  ev->epoch = l->epoch;
  ev->sample_shape = l->sample_shape;
  ev->mean = l->rc.mean;
  ev->std = l->rc.std;
  ev->priv->net = g_steal_pointer (&l->net);
  ev->priv->model = g_steal_pointer (&l->model);
  ev->priv->ds = g_steal_pointer (&l->ds);
  if (ev->priv->ds)
    ev->dataset = g_strdup (ev->priv->ds->description ? ev->priv->ds->description : l->rc.dataset);
  return ev;
}

NlEvaluation *
nl_evaluate_run (NlProject *p, gint64 run, const char *which, int max_misclassified, GCancellable *cancel,
                 void (*progress) (gpointer user, double fraction), gpointer user, GError **error)
{
  return nl_evaluate_run_on (p, run, which, NULL, max_misclassified, cancel, progress, user, error);
}

NlEvaluation *
nl_evaluate_run_on (NlProject *p, gint64 run, const char *which, const char *dataset, int max_misclassified,
                    GCancellable *cancel, void (*progress) (gpointer user, double fraction), gpointer user,
                    GError **error)
{
  g_auto (NlRunModel) l = { 0 };
  g_autoptr (NlEvaluation) ev = NULL;

  g_return_val_if_fail (p != NULL, NULL);
  if (!nl_run_model_load (&l, p, run, which, dataset, TRUE, error))
    return NULL;
  ev = evaluation_new (&l, run);
  if (!run_inference (ev, &l.rc, max_misclassified, cancel, progress, user, error))
    return NULL;
  return g_steal_pointer (&ev);
}

/* An evaluation's model and dataset without the pass over the data: what
 * predicting needs. */
NlEvaluation *
nl_evaluation_open (NlProject *p, gint64 run, const char *which, const char *dataset, gboolean need_data,
                    GError **error)
{
  g_auto (NlRunModel) l = { 0 };
  g_autoptr (NlEvaluation) ev = NULL;
  int C;

  g_return_val_if_fail (p != NULL, NULL);
  if (!nl_run_model_load (&l, p, run, which, dataset, need_data, error))
    return NULL;
  ev = evaluation_new (&l, run);
  ev->priv->single = program_for (ev->priv->model, 1, error);
  if (!ev->priv->single || !output_classes (ev->priv->single, 1, run, &C, error))
    return NULL;
  ev->priv->out_kind = out_kind_of (ev->priv->single);
  ev->n_classes = MAX (C, ev->priv->ds ? ev->priv->ds->n_classes : 0);
  ev->class_names = class_names_for (ev->priv->ds, ev->n_classes);
  return g_steal_pointer (&ev);
}

int64_t
nl_evaluation_n_samples (const NlEvaluation *ev)
{
  return ev->priv->ds ? ev->priv->ds->length : 0;
}

gboolean
nl_evaluation_predict_sample (NlEvaluation *ev, int64_t index, double **probs, int *label, GError **error)
{
  g_autoptr (GMutexLocker) locker = NULL;
  g_autofree double *p = NULL;
  NlProgram *prog;
  float *x, y, std = ev->std == 0.0f ? 1.0f : ev->std;
  int64_t numel = nl_shape_numel (&ev->sample_shape);

  g_return_val_if_fail (ev != NULL && probs != NULL, FALSE);
  if (!ev->priv->ds || index < 0 || index >= ev->priv->ds->length)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "sample %" G_GINT64_FORMAT " is not in %s", index,
                   ev->dataset ? ev->dataset : "the evaluation (it has no dataset)");
      return FALSE;
    }
  locker = g_mutex_locker_new (&ev->priv->lock);
  prog = ev->priv->single;
  x = nl_tensor_f32 (nl_program_input (prog));
  if (!nl_dataset_get (ev->priv->ds, index, x, &y, error))
    return FALSE;
  /* as the loader normalises (nl-loader.c) */
  if (ev->mean != 0.0f || std != 1.0f)
    for (int64_t k = 0; k < numel; k++)
      x[k] = (x[k] - ev->mean) / std;
  if (!nl_program_forward (prog, 0, error))
    return FALSE;
  p = g_new0 (double, ev->n_classes);
  row_probs (ev->priv->out_kind, nl_tensor_f32 (nl_program_pred (prog)),
             MIN (ev->n_classes, nl_tensor_numel (nl_program_pred (prog))), p);
  *probs = g_steal_pointer (&p);
  if (label)
    *label = (int) y;
  return TRUE;
}

void
nl_evaluation_free (NlEvaluation *ev)
{
  if (!ev)
    return;
  if (ev->priv)
    {
      g_clear_pointer (&ev->priv->single, nl_program_free);
      g_clear_pointer (&ev->priv->model, nl_model_free);
      g_clear_pointer (&ev->priv->net, nl_network_free);
      g_clear_pointer (&ev->priv->ds, nl_dataset_free);
      g_mutex_clear (&ev->priv->lock);
      g_free (ev->priv);
    }
  g_free (ev->dataset);
  g_strfreev (ev->class_names);
  g_free (ev->confusion);
  g_free (ev->precision);
  g_free (ev->recall);
  g_free (ev->f1);
  g_free (ev->support);
  g_free (ev->misclassified);
  g_free (ev);
}

gboolean
nl_evaluation_get_sample (NlEvaluation *ev, int64_t index, float *pixels, NlShape *shape, GError **error)
{
  float label;
  g_return_val_if_fail (ev != NULL && pixels != NULL, FALSE);
  if (shape)
    *shape = ev->sample_shape;
  if (!ev->priv->ds)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "the evaluation has no dataset");
      return FALSE;
    }
  return nl_dataset_get (ev->priv->ds, index, pixels, &label, error);
}

/* ---- image files ---- */

/* Decodes PATH the way image-folder datasets do (nl_folder_dataset_open:
 * content-sniffed PNG or JPEG, RGB, bilinear resize), by showing it to one
 * as a one-image folder: a model trained on a folder sees a dropped file
 * exactly as it saw its training images. rgb: 3 * h * w planar bytes. */
static gboolean
decode_image (const char *path, int w, int h, guint8 *rgb, GError **error)
{
  g_autofree char *tmp = NULL, *sub = NULL, *link = NULL, *abs = NULL;
  g_autoptr (GError) local = NULL;
  g_autoptr (NlDataset) ds = NULL;
  NlDatasetOptions opts = { .image_width = w, .image_height = h };
  gboolean ok = FALSE;
  float label;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot read the image %s: no such file", path);
      return FALSE;
    }
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "%s is a folder, not an image", path);
      return FALSE;
    }
  tmp = g_dir_make_tmp ("netloom-predict-XXXXXX", error);
  if (!tmp)
    return FALSE;
  sub = g_build_filename (tmp, "image", NULL);
  link = g_build_filename (sub, "image.png", NULL); /* decoded by content, whatever the name */
  abs = g_canonicalize_filename (path, NULL);
  if (g_mkdir (sub, 0700) != 0 || symlink (abs, link) != 0)
    g_set_error (&local, G_FILE_ERROR, g_file_error_from_errno (errno), "cannot prepare %s: %s", tmp,
                 g_strerror (errno));
  else if ((ds = nl_folder_dataset_open (tmp, FALSE, &opts, &local)))
    ok = ds->klass->read_u8 (ds, 0, rgb, &label, &local);
  g_unlink (link);
  g_rmdir (sub);
  g_rmdir (tmp);
  if (!ok)
    {
      /* the message names the link: name the user's file instead */
      g_autoptr (GString) msg = g_string_new (local->message);
      g_string_replace (msg, link, path, 0);
      g_set_error_literal (error, local->domain, local->code, msg->str);
    }
  return ok;
}

/* PATH as a normalised sample of `shape` ((1 or 3, H, W)) into x, and the
 * unnormalised one into seen (may be NULL). */
static gboolean
image_sample (const char *path, const NlShape *shape, float mean, float std, float *x, float *seen,
              GError **error)
{
  int64_t plane;
  int channels;
  g_autofree guint8 *rgb = NULL;
  gboolean normalise = mean != 0.0f || (std != 1.0f && std != 0.0f);
  char buf[96];

  if (shape->ndim != 3 || (shape->d[0] != 1 && shape->d[0] != 3) || shape->d[1] < 1 || shape->d[2] < 1)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "the model takes samples of shape %s, not images (1 or 3 channels, height, width)",
                   nl_shape_format (shape, buf, sizeof buf));
      return FALSE;
    }
  channels = (int) shape->d[0];
  plane = shape->d[1] * shape->d[2];
  rgb = g_malloc (3 * plane);
  if (!decode_image (path, (int) shape->d[2], (int) shape->d[1], rgb, error))
    return FALSE;
  if (std == 0.0f)
    std = 1.0f;
  for (int c = 0; c < channels; c++)
    for (int64_t k = 0; k < plane; k++)
      {
        /* luma rounded to a byte, so a gray image keeps its exact values */
        int v = channels == 3 ? rgb[c * plane + k]
                              : (299 * rgb[k] + 587 * rgb[plane + k] + 114 * rgb[2 * plane + k] + 500) / 1000;
        float u = (float) v / 255.0f; /* as the loader's table */
        if (seen)
          seen[c * plane + k] = u;
        x[c * plane + k] = normalise ? (u - mean) / std : u;
      }
  return TRUE;
}

gboolean
nl_image_file_read_sample (const char *path, const NlShape *shape, float mean, float std, float *x, float *seen,
                           GError **error)
{
  return image_sample (path, shape, mean, std, x, seen, error);
}

/* Classifies with the model in priv (locked); probs holds n_out values. */
static gboolean
predict (NlEvaluationPrivate *priv, const char *path, const NlShape *shape, float mean, float std, gint64 run,
         double *probs, int n_out, float *seen, GError **error)
{
  /* held to the return, never read: clang calls it unused */
  G_GNUC_UNUSED g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&priv->lock);
  NlTensor *pred;
  int C;

  if (!priv->single && !(priv->single = program_for (priv->model, 1, error)))
    return FALSE;
  if (!output_classes (priv->single, 1, run, &C, error))
    return FALSE;
  priv->out_kind = out_kind_of (priv->single);
  if (!image_sample (path, shape, mean, std, nl_tensor_f32 (nl_program_input (priv->single)), seen, error)
      || !nl_program_forward (priv->single, 0, error))
    return FALSE;
  pred = nl_program_pred (priv->single);
  for (int j = 0; j < n_out; j++)
    probs[j] = 0;
  row_probs (priv->out_kind, nl_tensor_f32 (pred), MIN (C, n_out), probs);
  return TRUE;
}

gboolean
nl_evaluation_predict_image_file (NlEvaluation *ev, const char *path, double **probs, float **seen,
                                  GError **error)
{
  g_autofree double *p = NULL;
  g_autofree float *s = NULL;
  g_return_val_if_fail (ev != NULL && path != NULL && probs != NULL, FALSE);
  p = g_new0 (double, ev->n_classes);
  if (seen)
    s = g_new0 (float, nl_shape_numel (&ev->sample_shape));
  if (!predict (ev->priv, path, &ev->sample_shape, ev->mean, ev->std, ev->run, p, ev->n_classes, s, error))
    return FALSE;
  *probs = g_steal_pointer (&p);
  if (seen)
    *seen = g_steal_pointer (&s);
  return TRUE;
}

gboolean
nl_predict_image_file (NlProject *p, gint64 run, const char *which, const char *path, double **probs, int *n,
                       char ***class_names, GError **error)
{
  g_autoptr (NlEvaluation) ev = NULL;

  g_return_val_if_fail (p != NULL && path != NULL && probs != NULL, FALSE);
  if (!(ev = nl_evaluation_open (p, run, which, NULL, FALSE, error))
      || !nl_evaluation_predict_image_file (ev, path, probs, NULL, error))
    return FALSE;
  if (n)
    *n = ev->n_classes;
  if (class_names)
    *class_names = g_strdupv (ev->class_names);
  return TRUE;
}
