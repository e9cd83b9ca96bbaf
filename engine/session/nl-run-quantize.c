/* nl-run-quantize.c — INT8 post-training quantization of a run's
 * checkpoint (nl-run-quantize.h): calibrate with an fp32 NlInferNet,
 * compile the INT8 one, compare both on the test split, store. */
#include "engine/session/nl-run-quantize.h"

#include <math.h>
#include <string.h>

#include "engine/data/nl-loader.h"
#include "engine/formats/nl-int8-model.h"
#include "engine/infer/nl-infer-net.h"
#include "engine/infer/nl-quant-calib.h"
#include "engine/session/nl-run-model.h"
#include "engine/train/nl-metric.h"

#define BATCH 128
#define DEFAULT_SAMPLES 512
/* timing: the median of this many passes over at most TIMED_BATCHES test batches */
#define TIMING_REPEATS 5
#define TIMED_BATCHES 16

void
nl_quantize_result_clear (NlQuantizeResult *r)
{
  g_clear_pointer (&r->table, nl_quant_table_free);
  g_clear_pointer (&r->fp32_confusion, g_free);
  g_clear_pointer (&r->int8_confusion, g_free);
}

/* A split in memory, normalised as the loader does, in batches of BATCH:
 * calibration runs over the same batches twice, and timing must not time
 * the loader. */
typedef struct {
  int n_batches;
  int64_t sample;        /* floats per sample */
  float *x, *labels;     /* n_batches * BATCH samples */
  int *rows;             /* valid rows of each batch */
} Batches;

static void
batches_clear (Batches *b)
{
  g_free (b->x);
  g_free (b->labels);
  g_free (b->rows);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Batches, batches_clear)

/* The first n samples of ds (n < 0: all) into b. */
static gboolean
load_batches (NlDataset *ds, const NlRunConfig *rc, int64_t n, Batches *b, GError **error)
{
  g_autofree int64_t *indices = NULL;
  NlLoaderConfig lc = { .batch_size = BATCH, .shuffle = FALSE, .last_batch = NL_LAST_BATCH_KEEP,
                        .num_workers = rc->workers, .mean = rc->mean, .std = rc->std };
  g_autoptr (NlLoader) loader = NULL;
  g_autoptr (NlTensor) data = NULL, labels = NULL;
  int64_t dims[NL_MAX_DIMS + 1] = { BATCH };
  NlShape ls = nl_shape_of (1, (int64_t) BATCH);
  int got;

  if (ds->label_shape.ndim > 0)
    {
      /* the executor that INT8 runs in declines per-step labels (nl-infer-net.h) */
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "quantization takes datasets with one label per "
                   "sample; %s has %" G_GINT64_FORMAT, ds->description ? ds->description : "this dataset",
                   nl_dataset_label_numel (ds));
      return FALSE;
    }
  if (n >= 0)
    {
      indices = g_new (int64_t, MAX (n, 1));
      for (int64_t i = 0; i < n; i++)
        indices[i] = i;
      lc.indices = indices;
      lc.n_indices = n;
    }
  else
    n = ds->length;
  for (int d = 0; d < ds->sample_shape.ndim; d++)
    dims[d + 1] = ds->sample_shape.d[d];
  b->sample = nl_shape_numel (&ds->sample_shape);
  b->n_batches = (int) ((n + BATCH - 1) / BATCH);
  b->x = g_new (float, (gsize) MAX (b->n_batches, 1) * BATCH * b->sample);
  b->labels = g_new0 (float, (gsize) MAX (b->n_batches, 1) * BATCH);
  b->rows = g_new0 (int, MAX (b->n_batches, 1));
  if (!(loader = nl_loader_new (ds, &lc, error)))
    return FALSE;
  data = nl_tensor_new (NL_DTYPE_F32, ds->sample_shape.ndim + 1, dims);
  labels = nl_tensor_zeros (NL_DTYPE_F32, &ls);
  nl_loader_start_epoch (loader, 0);
  for (int i = 0; i < b->n_batches; i++)
    {
      if ((got = nl_loader_next (loader, data, labels, error)) <= 0)
        {
          if (got == 0)
            g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s ended early",
                         ds->description ? ds->description : "the dataset");
          return FALSE;
        }
      b->rows[i] = got;
      memcpy (b->x + (gsize) i * BATCH * b->sample, nl_tensor_f32 (data), sizeof (float) * got * b->sample);
      memcpy (b->labels + (gsize) i * BATCH, nl_tensor_f32 (labels), sizeof (float) * got);
    }
  return TRUE;
}

/* Runs batch i of b through net. */
static gboolean
run_batch (NlInferNet *net, const Batches *b, int i, GError **error)
{
  memcpy (nl_tensor_f32 (nl_infer_net_input (net)), b->x + (gsize) i * BATCH * b->sample,
          sizeof (float) * b->rows[i] * b->sample);
  return nl_infer_net_run (net, b->rows[i], error);
}

typedef struct {
  NlQuantizeProgress fn;
  gpointer data;
  GCancellable *cancel;
} Progress;

static gboolean
report (const Progress *pr, const char *phase, double fraction, GError **error)
{
  if (pr->fn)
    pr->fn (phase, fraction, pr->data);
  return !g_cancellable_set_error_if_cancelled (pr->cancel, error);
}

/* Calibration: the method's passes over the calibration batches. */
static NlQuantTable *
calibrate (NlModel *model, NlQuantMethod method, const Batches *b, int samples, const Progress *pr,
           GError **error)
{
  g_autoptr (NlQuantCalib) calib = nl_quant_calib_new (method);
  g_autoptr (NlInferNet) net = NULL;
  NlInferOptions o = { .batch = BATCH, .mode = NL_INFER_FP32, .observe = nl_quant_calib_observe,
                       .observe_data = calib };
  int passes = nl_quant_calib_passes (calib);
  if (!(net = nl_infer_net_new (model, &o, error)))
    return NULL;
  for (int pass = 0; pass < passes; pass++)
    {
      nl_quant_calib_begin_pass (calib, pass);
      for (int i = 0; i < b->n_batches; i++)
        if (!report (pr, "calibrating", (pass + (double) i / b->n_batches) / passes, error)
            || !run_batch (net, b, i, error))
          return NULL;
    }
  return nl_quant_calib_finish (calib, samples, error);
}

/* Accuracy and confusion (n_classes^2, new) of net on b. */
static gboolean
evaluate (NlInferNet *net, const Batches *b, int n_classes, const char *phase, const Progress *pr, double *acc,
          gint64 **confusion, GError **error)
{
  g_autofree gint64 *conf = g_new0 (gint64, (gsize) n_classes * n_classes);
  int64_t C = nl_tensor_numel (nl_infer_net_output (net)) / BATCH, seen = 0, correct = 0;
  for (int i = 0; i < b->n_batches; i++)
    {
      const float *out;
      if (!report (pr, phase, (double) i / b->n_batches, error) || !run_batch (net, b, i, error))
        return FALSE;
      out = nl_tensor_f32 (nl_infer_net_output (net));
      for (int r = 0; r < b->rows[i]; r++)
        {
          float y = b->labels[(gsize) i * BATCH + r];
          int truth = (int) y, guess = (int) nl_metric_argmax (out + r * C, C);
          if (!(y >= 0 && truth < n_classes && y == truth))
            {
              g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                           "test sample %" G_GINT64_FORMAT " has label %g, outside the %d classes", seen, y,
                           n_classes);
              return FALSE;
            }
          conf[truth * n_classes + guess]++;
          correct += truth == guess;
          seen++;
        }
    }
  *acc = seen ? (double) correct / seen : NAN;
  *confusion = g_steal_pointer (&conf);
  return TRUE;
}

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* Images per second of net at batch BATCH: the median of a few passes over
 * the first test batches. */
static gboolean
time_net (NlInferNet *net, const Batches *b, const char *phase, const Progress *pr, double *ips, GError **error)
{
  double rates[TIMING_REPEATS];
  int n = MIN (b->n_batches, TIMED_BATCHES);
  if (!run_batch (net, b, 0, error)) /* warm: first-touch of its memory */
    return FALSE;
  for (int r = 0; r < TIMING_REPEATS; r++)
    {
      gint64 images = 0, start;
      if (!report (pr, phase, (double) r / TIMING_REPEATS, error))
        return FALSE;
      start = g_get_monotonic_time ();
      for (int i = 0; i < n; i++)
        {
          if (!run_batch (net, b, i, error))
            return FALSE;
          images += b->rows[i];
        }
      rates[r] = images / MAX ((g_get_monotonic_time () - start) / 1e6, 1e-9);
    }
  qsort (rates, TIMING_REPEATS, sizeof (double), compare_doubles);
  *ips = rates[TIMING_REPEATS / 2];
  return TRUE;
}

/* Whether RUN's network snapshot has a Conv2D or Dense, before its
 * checkpoint is read; a snapshot that does not load passes, for
 * nl_run_model_load to name. */
static gboolean
check_quantizable (NlProject *p, gint64 run, GError **error)
{
  g_autoptr (NlRunInfo) info = nl_project_get_run (p, run, error);
  g_autoptr (NlNetwork) net = info ? nl_network_load_data (info->network_json, -1, NULL) : NULL;
  if (!info)
    return FALSE;
  for (int i = 0; net && i < nl_network_n_nodes (net); i++)
    {
      const char *op = nl_network_node (net, i)->def->name;
      if (!strcmp (op, "Conv2D") || !strcmp (op, "Dense"))
        return TRUE;
    }
  if (net)
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                 "run %" G_GINT64_FORMAT "'s network has no Conv2D or Dense layer: there is nothing to quantize", run);
  return !net;
}

/* The run's training split, with at least `samples` samples. */
static NlDataset *
open_calibration_split (const NlRunModel *l, gint64 run, int samples, GError **error)
{
  g_autoptr (GError) local = NULL;
  NlDataset *ds = nl_dataset_open_full (l->rc.dataset, TRUE, &l->rc.data, &local);
  if (!ds)
    {
      g_set_error (error, local->domain, local->code,
                   "the training split of run %" G_GINT64_FORMAT "'s dataset “%s” is not available: %s", run,
                   l->rc.dataset, local->message);
      return NULL;
    }
  if (samples > ds->length)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "cannot calibrate on %d samples: the training split of run %" G_GINT64_FORMAT " (%s) has %"
                   G_GINT64_FORMAT, samples, run, ds->description ? ds->description : l->rc.dataset, ds->length);
      nl_dataset_free (ds);
      return NULL;
    }
  return ds;
}

/* fp32 and INT8 on the test split: accuracy, confusion, images/s. */
static gboolean
compare (NlModel *model, const NlQuantTable *table, const Batches *test, NlQuantizeResult *r, const Progress *pr,
         GError **error)
{
  g_autoptr (NlInferNet) fp32 = NULL, int8 = NULL;
  NlInferOptions o = { .batch = BATCH, .mode = NL_INFER_FP32 };
  if (!(fp32 = nl_infer_net_new (model, &o, error)))
    return FALSE;
  /* a network with more outputs than the dataset has classes still gets square matrices */
  r->n_classes = MAX (r->n_classes, (int) (nl_tensor_numel (nl_infer_net_output (fp32)) / BATCH));
  o.mode = NL_INFER_INT8;
  o.quant = table;
  if (!(int8 = nl_infer_net_new (model, &o, error)))
    return FALSE;
  return evaluate (fp32, test, r->n_classes, "evaluating fp32", pr, &r->fp32_test_acc, &r->fp32_confusion, error)
         && evaluate (int8, test, r->n_classes, "evaluating int8", pr, &r->int8_test_acc, &r->int8_confusion, error)
         && time_net (fp32, test, "timing fp32", pr, &r->fp32_images_per_s, error)
         && time_net (int8, test, "timing int8", pr, &r->int8_images_per_s, error);
}

static gint64
store (NlProject *p, gint64 run, NlRunModel *l, const NlQuantizeResult *r, GError **error)
{
  g_autoptr (GBytes) blob = nl_int8_model_write (l->model, r->table, l->epoch, error);
  NlInt8ModelInfo info = {
    .run = run, .checkpoint = l->checkpoint, .epoch = l->epoch,
    .method = nl_quant_method_name (r->table->method), .calibration_samples = r->table->calibration_samples,
    .fp32_test_acc = r->fp32_test_acc, .int8_test_acc = r->int8_test_acc,
    .fp32_images_per_s = r->fp32_images_per_s, .int8_images_per_s = r->int8_images_per_s,
  };
  if (!blob)
    return 0;
  return nl_project_add_int8_model (p, &info, g_bytes_get_data (blob, NULL), g_bytes_get_size (blob), error);
}

gboolean
nl_run_quantize (NlProject *p, gint64 run, const NlQuantizeOptions *opts, NlQuantizeProgress progress,
                 gpointer user_data, NlQuantizeResult *result, GCancellable *cancellable, GError **error)
{
  g_auto (NlRunModel) l = { 0 };
  g_auto (Batches) calib = { 0 };
  g_auto (Batches) test = { 0 };
  g_autoptr (NlDataset) train = NULL;
  NlQuantizeResult r = { 0 };
  Progress pr = { progress, user_data, cancellable };
  int samples = opts && opts->calibration_samples ? opts->calibration_samples : DEFAULT_SAMPLES;
  NlQuantMethod method = opts ? opts->method : NL_QUANT_ENTROPY;

  g_return_val_if_fail (p != NULL && result != NULL, FALSE);
  memset (result, 0, sizeof *result);
  if (samples < 1)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "calibration needs at least 1 sample, not %d",
                   samples);
      return FALSE;
    }
  if (!report (&pr, "loading", 0, error) || !check_quantizable (p, run, error)
      || !nl_run_model_load (&l, p, run, opts ? opts->which : NULL, NULL, TRUE, error))
    return FALSE;
  if (!(train = open_calibration_split (&l, run, samples, error)) || !load_batches (train, &l.rc, samples, &calib, error)
      || !load_batches (l.ds, &l.rc, -1, &test, error))
    return FALSE;
  r.checkpoint = l.checkpoint;
  r.epoch = l.epoch;
  r.n_classes = l.ds->n_classes;
  if (!(r.table = calibrate (l.model, method, &calib, samples, &pr, error)))
    return FALSE;
  if (!compare (l.model, r.table, &test, &r, &pr, error) || !report (&pr, "saving", 1, error)
      || (r.int8_id = store (p, run, &l, &r, error)) <= 0)
    {
      nl_quantize_result_clear (&r);
      return FALSE;
    }
  *result = r;
  return TRUE;
}
