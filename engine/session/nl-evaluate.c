/* nl-evaluate.c — a checkpoint's confusion matrix, per-class scores, most
 * confident mistakes, and single-image predictions. */
#include "engine/session/nl-evaluate.h"
#include "engine/data/nl-loader.h"
#include "engine/formats/nl-checkpoint.h"
#include "engine/formats/nl-int8-model.h"
#include "engine/session/nl-eval-runner.h"
#include "engine/session/nl-run-model.h"
#include "engine/train/nl-metric.h"

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
  NlQuantTable *int8;     /* the INT8 model's table; NULL: fp32 */
  NlVocab *vocab;         /* a text run's; NULL otherwise */
  NlEvalRunner *single;   /* batch 1, for image files; built on demand */
  OutKind out_kind;
  GMutex lock;            /* single and the model's forward passes */
};

/* ---- the model of a run's checkpoint ---- */

/* From the inference graph of the model: what its prediction's op is. */
static OutKind
out_kind_of (NlModel *m)
{
  NlCompileOptions opts = { .batch = 1, .training = FALSE, .loss = NULL };
  g_autoptr (NlGraph) g = nl_graph_compile (m->net, &m->sample_shape, &opts, NULL);
  int node = g ? nl_graph_value (g, g->pred_value)->node : -1;
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

static char **
class_names_for (const NlDataset *ds, int n)
{
  char **names = g_new0 (char *, n + 1);
  int have = ds && ds->class_names ? (int) g_strv_length (ds->class_names) : 0;
  for (int c = 0; c < n; c++)
    names[c] = c < have ? g_strdup (ds->class_names[c]) : g_strdup_printf ("%d", c);
  return names;
}

/* Label values per sample of ds (per-step labels: one per step), 1 without ds */
static int64_t
labels_per_sample (const NlDataset *ds)
{
  return ds ? nl_dataset_label_numel (ds) : 1;
}

/* Classes the network scores: its output's last dimension (the outputs of
 * a sample over its `per_sample` labels). */
static gboolean
output_classes (NlEvalRunner *runner, gint64 run, int64_t per_sample, int *n, GError **error)
{
  int64_t out = nl_eval_runner_classes (runner), C = out / per_sample;
  if (out % per_sample != 0)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "run %" G_GINT64_FORMAT "'s network outputs %" G_GINT64_FORMAT " values per sample, which do not "
                   "divide into its %" G_GINT64_FORMAT " labels", run, out, per_sample);
      return FALSE;
    }
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

/* One batch of n predictions against their labels, `per` of them a sample
 * (per-step labels); first is the dataset index of the batch's sample 0. */
static gboolean
tally (NlEvaluation *ev, const float *x, int64_t C, const float *labels, int64_t n, int64_t per, int64_t first,
       GArray *mistakes, double *probs, GError **error)
{
  for (int64_t i = 0; i < n; i++)
    {
      const float *row = x + i * C;
      int truth = (int) labels[i], guess = (int) nl_metric_argmax (row, C);
      if (!(labels[i] >= 0 && truth < ev->n_classes && labels[i] == truth))
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                       "sample %" G_GINT64_FORMAT " has label %g, outside the %d classes", first + i / per,
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
      NlMisclassified m = { .index = first + i / per, .truth = truth, .predicted = guess,
                            .confidence = probs[guess] };
      g_array_append_val (mistakes, m);
    }
  ev->n_samples += n;
  return TRUE;
}

/* Inference over the split in the trainer's evaluation batches. */
static gboolean
run_inference (NlEvaluation *ev, const NlRunConfig *cfg, int max_misclassified, GCancellable *cancel,
               void (*progress) (gpointer, double), gpointer user, GError **error)
{
  NlLoaderConfig lc = { .batch_size = cfg->eval_batch_size, .shuffle = FALSE, .last_batch = NL_LAST_BATCH_KEEP,
                        .num_workers = cfg->workers, .mean = cfg->mean, .std = cfg->std };
  g_autoptr (NlLoader) loader = NULL;
  g_autoptr (NlEvalRunner) runner = NULL;
  g_autoptr (NlTensor) labels = NULL;
  g_autoptr (GArray) mistakes = g_array_new (FALSE, FALSE, sizeof (NlMisclassified));
  g_autofree double *probs = NULL;
  const NlDataset *ds = ev->priv->ds;
  NlShape ls = nl_shape_batched (MAX (cfg->eval_batch_size, 1), &ds->label_shape);
  int64_t length = ds->length, per = labels_per_sample (ds), done = 0;
  gint64 start = g_get_monotonic_time (), in_model = 0;
  int n, C;

  if (cfg->eval_batch_size < 1)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the run's evaluation batch size is %d",
                   cfg->eval_batch_size);
      return FALSE;
    }
  loader = nl_loader_new (ev->priv->ds, &lc, error);
  runner = loader ? nl_eval_runner_new_for (ev->priv->model, cfg->eval_batch_size, ev->priv->int8, &ds->label_shape,
                                            error) : NULL;
  if (!runner || !output_classes (runner, ev->run, per, &C, error))
    return FALSE;
  ev->priv->out_kind = out_kind_of (ev->priv->model);
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
  while ((n = nl_loader_next (loader, nl_eval_runner_input (runner), labels, error)) > 0)
    {
      gint64 t0 = g_get_monotonic_time ();
      if (g_cancellable_set_error_if_cancelled (cancel, error))
        return FALSE;
      /* the kept short last batch runs its rows alone, as the trainer evaluates it */
      if (!nl_eval_runner_run (runner, n, error))
        return FALSE;
      in_model += g_get_monotonic_time () - t0;
      if (!tally (ev, nl_eval_runner_output (runner), C, nl_tensor_f32 (labels), n * per, per, done, mistakes, probs,
                  error))
        return FALSE;
      done += n;
      if (progress)
        progress (user, length > 0 ? (double) done / length : 1.0);
    }
  if (n < 0)
    return FALSE;
  ev->seconds = (g_get_monotonic_time () - start) / 1e6;
  ev->images_per_s = in_model > 0 ? done / (in_model / 1e6) : NAN;
  g_array_sort (mistakes, compare_mistakes);
  if (max_misclassified >= 0 && mistakes->len > (guint) max_misclassified)
    g_array_set_size (mistakes, max_misclassified);
  ev->n_misclassified = (int) mistakes->len;
  ev->misclassified = (NlMisclassified *) g_array_free (g_steal_pointer (&mistakes), FALSE);
  scores (ev);
  return TRUE;
}

/* The run's INT8 model made from checkpoint `which` (NULL: its newest):
 * its weights into l's model, its table into *table; l's checkpoint and
 * epoch become its source's. */
static gboolean
load_int8 (NlRunModel *l, NlProject *p, gint64 run, gint64 id, NlQuantTable **table, GError **error)
{
  g_autoptr (GBytes) blob = nl_project_load_int8_model (p, id, NULL, error);
  g_autoptr (GArray) models = blob ? nl_project_list_int8_models (p, run, error) : NULL;
  if (!models || !nl_int8_model_read (blob, l->model, table, error))
    return FALSE;
  for (guint i = 0; i < models->len; i++)
    if (g_array_index (models, NlInt8ModelInfo, i).id == id)
      {
        l->checkpoint = g_array_index (models, NlInt8ModelInfo, i).checkpoint;
        l->epoch = g_array_index (models, NlInt8ModelInfo, i).epoch;
      }
  return TRUE;
}

/* nl_run_model_load, then the INT8 model over its weights (int8) */
static gboolean
model_load (NlRunModel *l, NlProject *p, gint64 run, const char *which, const char *dataset, gboolean need_data,
            gboolean int8, gint64 *int8_id, NlQuantTable **table, GError **error)
{
  /* the INT8 model first: "run 3 has no INT8 model" is the news */
  if (int8 && (*int8_id = nl_project_find_int8_model (p, run, which, error)) <= 0)
    return FALSE;
  return nl_run_model_load (l, p, run, which, dataset, need_data, error)
         && (!int8 || load_int8 (l, p, run, *int8_id, table, error));
}

/* The given normalisation over the run's; FALSE for a std that is not > 0. */
static gboolean
apply_norm (NlRunModel *l, const NlEvalNorm *norm, GError **error)
{
  if (!norm)
    return TRUE;
  if (!isnan (norm->std) && !(norm->std > 0 && isfinite (norm->std)))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "--std must be > 0, not %g", norm->std);
      return FALSE;
    }
  if (!isnan (norm->mean))
    l->rc.mean = (float) norm->mean;
  if (!isnan (norm->std))
    l->rc.std = (float) norm->std;
  return TRUE;
}

static gboolean
norm_given (const NlEvalNorm *norm)
{
  return norm && (!isnan (norm->mean) || !isnan (norm->std));
}

static NlEvaluation *
evaluation_new (NlRunModel *l, gint64 run, gint64 int8_id, NlQuantTable *table)
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
  ev->priv->vocab = g_steal_pointer (&l->vocab);
  ev->norm_absent = l->no_normalisation;
  ev->priv->int8 = table;
  ev->int8_model = int8_id;
  ev->images_per_s = ev->latency_ms = NAN;
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
  return nl_evaluate_run_full (p, run, which, dataset, FALSE, max_misclassified, cancel, progress, user, error);
}

static NlEvaluation *
evaluate_run (NlProject *p, gint64 run, const char *which, const char *dataset, gboolean int8, const NlEvalNorm *norm,
              int max_misclassified, GCancellable *cancel, void (*progress) (gpointer user, double fraction),
              gpointer user, GError **error)
{
  g_auto (NlRunModel) l = { 0 };
  g_autoptr (NlEvaluation) ev = NULL;
  NlQuantTable *table = NULL;
  gint64 int8_id = 0;

  g_return_val_if_fail (p != NULL, NULL);
  if (!model_load (&l, p, run, which, dataset, TRUE, int8, &int8_id, &table, error) || !apply_norm (&l, norm, error))
    return NULL;
  ev = evaluation_new (&l, run, int8_id, table);
  ev->norm_given = norm_given (norm);
  if (!run_inference (ev, &l.rc, max_misclassified, cancel, progress, user, error))
    return NULL;
  return g_steal_pointer (&ev);
}

NlEvaluation *
nl_evaluate_run_full (NlProject *p, gint64 run, const char *which, const char *dataset, gboolean int8,
                      int max_misclassified, GCancellable *cancel, void (*progress) (gpointer user, double fraction),
                      gpointer user, GError **error)
{
  return evaluate_run (p, run, which, dataset, int8, NULL, max_misclassified, cancel, progress, user, error);
}

NlEvaluation *
nl_evaluate_run_norm (NlProject *p, gint64 run, const char *which, const char *dataset, gboolean int8,
                      const NlEvalNorm *norm, GError **error)
{
  return evaluate_run (p, run, which, dataset, int8, norm, 0, NULL, NULL, NULL, error);
}

/* An evaluation's model and dataset without the pass over the data: what
 * predicting needs. */
NlEvaluation *
nl_evaluation_open (NlProject *p, gint64 run, const char *which, const char *dataset, gboolean need_data,
                    GError **error)
{
  return nl_evaluation_open_full (p, run, which, dataset, need_data, FALSE, error);
}

NlEvaluation *
nl_evaluation_open_full (NlProject *p, gint64 run, const char *which, const char *dataset, gboolean need_data,
                         gboolean int8, GError **error)
{
  return nl_evaluation_open_norm (p, run, which, dataset, need_data, int8, NULL, error);
}

NlEvaluation *
nl_evaluation_open_norm (NlProject *p, gint64 run, const char *which, const char *dataset, gboolean need_data,
                         gboolean int8, const NlEvalNorm *norm, GError **error)
{
  g_auto (NlRunModel) l = { 0 };
  g_autoptr (NlEvaluation) ev = NULL;
  NlQuantTable *table = NULL;
  gint64 int8_id = 0;
  int C;

  g_return_val_if_fail (p != NULL, NULL);
  if (!model_load (&l, p, run, which, dataset, need_data, int8, &int8_id, &table, error) || !apply_norm (&l, norm, error))
    return NULL;
  ev = evaluation_new (&l, run, int8_id, table);
  ev->norm_given = norm_given (norm);
  ev->priv->single = nl_eval_runner_new_for (ev->priv->model, 1, ev->priv->int8,
                                             ev->priv->ds ? &ev->priv->ds->label_shape : NULL, error);
  if (!ev->priv->single || !output_classes (ev->priv->single, run, labels_per_sample (ev->priv->ds), &C, error))
    return NULL;
  ev->priv->out_kind = out_kind_of (ev->priv->model);
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
  NlEvalRunner *runner;
  g_autofree float *y = NULL;
  float *x, std = ev->std == 0.0f ? 1.0f : ev->std;
  gint64 t0;
  int64_t numel = nl_shape_numel (&ev->sample_shape);

  g_return_val_if_fail (ev != NULL && probs != NULL, FALSE);
  if (!ev->priv->ds || index < 0 || index >= ev->priv->ds->length)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "sample %" G_GINT64_FORMAT " is not in %s", index,
                   ev->dataset ? ev->dataset : "the evaluation (it has no dataset)");
      return FALSE;
    }
  locker = g_mutex_locker_new (&ev->priv->lock);
  runner = ev->priv->single;
  x = nl_tensor_f32 (nl_eval_runner_input (runner));
  y = g_new0 (float, nl_dataset_label_numel (ev->priv->ds));
  if (!nl_dataset_get (ev->priv->ds, index, x, y, error))
    return FALSE;
  /* as the loader normalises (nl-loader.c) */
  if (ev->mean != 0.0f || std != 1.0f)
    for (int64_t k = 0; k < numel; k++)
      x[k] = (x[k] - ev->mean) / std;
  t0 = g_get_monotonic_time ();
  if (!nl_eval_runner_run (runner, 1, error))
    return FALSE;
  ev->latency_ms = (g_get_monotonic_time () - t0) / 1e3;
  p = g_new0 (double, ev->n_classes);
  row_probs (ev->priv->out_kind, nl_eval_runner_output (runner), MIN (ev->n_classes, nl_eval_runner_classes (runner)),
             p);
  *probs = g_steal_pointer (&p);
  if (label)
    *label = (int) y[0];
  return TRUE;
}

void
nl_evaluation_free (NlEvaluation *ev)
{
  if (!ev)
    return;
  if (ev->priv)
    {
      g_clear_pointer (&ev->priv->single, nl_eval_runner_free);
      g_clear_pointer (&ev->priv->int8, nl_quant_table_free);
      g_clear_pointer (&ev->priv->model, nl_model_free);
      g_clear_pointer (&ev->priv->net, nl_network_free);
      g_clear_pointer (&ev->priv->ds, nl_dataset_free);
      g_clear_pointer (&ev->priv->vocab, nl_vocab_unref);
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
  g_autofree float *label = NULL;
  g_return_val_if_fail (ev != NULL && pixels != NULL, FALSE);
  if (shape)
    *shape = ev->sample_shape;
  if (!ev->priv->ds)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "the evaluation has no dataset");
      return FALSE;
    }
  label = g_new0 (float, nl_dataset_label_numel (ev->priv->ds));
  return nl_dataset_get (ev->priv->ds, index, pixels, label, error);
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
         double *probs, int n_out, float *seen, double *latency_ms, GError **error)
{
  /* held to the return, never read: clang calls it unused */
  G_GNUC_UNUSED g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&priv->lock);
  gint64 t0;
  int C;

  if (!priv->single && !(priv->single = nl_eval_runner_new_for (priv->model, 1, priv->int8,
                                                                 priv->ds ? &priv->ds->label_shape : NULL, error)))
    return FALSE;
  if (!output_classes (priv->single, run, labels_per_sample (priv->ds), &C, error))
    return FALSE;
  priv->out_kind = out_kind_of (priv->model);
  if (!image_sample (path, shape, mean, std, nl_tensor_f32 (nl_eval_runner_input (priv->single)), seen, error))
    return FALSE;
  t0 = g_get_monotonic_time ();
  if (!nl_eval_runner_run (priv->single, 1, error))
    return FALSE;
  *latency_ms = (g_get_monotonic_time () - t0) / 1e3;
  for (int j = 0; j < n_out; j++)
    probs[j] = 0;
  row_probs (priv->out_kind, nl_eval_runner_output (priv->single), MIN (C, n_out), probs);
  return TRUE;
}

gboolean
nl_evaluation_predict_text (NlEvaluation *ev, const char *text, double **probs, GError **error)
{
  g_return_val_if_fail (ev != NULL && text != NULL && probs != NULL, FALSE);
  NlEvaluationPrivate *priv = ev->priv;
  if (!priv->vocab)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "run %" G_GINT64_FORMAT " was not trained on text (text: or text-lm: data): it has no vocabulary "
                   "to read a text with", ev->run);
      return FALSE;
    }
  G_GNUC_UNUSED g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&priv->lock);
  int64_t T = nl_shape_numel (&ev->sample_shape), C = nl_eval_runner_classes (priv->single);
  if (C > ev->n_classes)
    {
      /* scores for every step: a language model */
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "run %" G_GINT64_FORMAT " predicts a token at every step, not a class of the text: use "
                   "netloom-cli generate", ev->run);
      return FALSE;
    }
  float *x = nl_tensor_f32 (nl_eval_runner_input (priv->single)), std = ev->std == 0.0f ? 1.0f : ev->std;
  nl_vocab_encode (priv->vocab, text, (int) T, x, NULL);
  /* as the loader normalises (nl-loader.c); a text kind's is 0 and 1 */
  for (int64_t k = 0; k < T && (ev->mean != 0.0f || std != 1.0f); k++)
    x[k] = (x[k] - ev->mean) / std;
  gint64 t0 = g_get_monotonic_time ();
  if (!nl_eval_runner_run (priv->single, 1, error))
    return FALSE;
  ev->latency_ms = (g_get_monotonic_time () - t0) / 1e3;
  double *p = g_new0 (double, ev->n_classes);
  row_probs (priv->out_kind, nl_eval_runner_output (priv->single), MIN (ev->n_classes, C), p);
  *probs = p;
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
  if (!predict (ev->priv, path, &ev->sample_shape, ev->mean, ev->std, ev->run, p, ev->n_classes, s,
                &ev->latency_ms, error))
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
