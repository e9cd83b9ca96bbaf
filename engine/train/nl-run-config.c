/* nl-run-config.c — the run settings' one table and what it drives. */
#include "engine/train/nl-run-config.h"
#include "core/nl-device.h"
#include "core/nl-json-guard.h"
#include "engine/data/nl-dataset-kind.h"
#include "engine/data/nl-loader.h"
#include "engine/train/nl-lr-schedule.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#define OFF(m) offsetof (NlRunConfig, m)
#define S NL_RUN_FIELD_STORED
#define OPT NL_RUN_FIELD_OPTIM_DEFAULT
#define LO NL_RUN_FIELD_MIN_OPEN
#define HI NL_RUN_FIELD_MAX_OPEN
#define INF INFINITY

/* Stored fields in the order runs have always stored them: the JSON of a
 * run stays byte for byte what it was. absent: what a key missing from an
 * older run's settings reads as (NAN: the value init or the optimizer
 * gives). Open-ended ranges at +-INF with the _OPEN flags mean "finite". */
static const NlRunField fields[] = {
  { "dataset", NL_RUN_FIELD_STRING, OFF (dataset), S, 0, "fashion-mnist", 0, 0, NAN,
    "The dataset spec, KIND[:PATH] (KIND a row of nl_dataset_kinds)" },
  { "epochs", NL_RUN_FIELD_INT, OFF (epochs), S, 5, NULL, 1, 1000000, 1, "Epochs to train" },
  { "batch_size", NL_RUN_FIELD_INT, OFF (batch_size), S, 128, NULL, 1, 1 << 20, 128, "Samples per batch" },
  { "optimizer", NL_RUN_FIELD_OPTIMIZER, OFF (optim.kind), S, 0, "sgd", 0, 0, NAN,
    "sgd, nag, adam, adamw, rmsprop or adagrad" },
  { "lr", NL_RUN_FIELD_FLOAT, OFF (optim.lr), S | OPT | LO | HI, NAN, NULL, 0, INF, NAN,
    "Learning rate (the optimizer's default; sgd 0.1)" },
  { "momentum", NL_RUN_FIELD_FLOAT, OFF (optim.momentum), S | OPT | HI, NAN, NULL, 0, 1, NAN,
    "Momentum (sgd, nag, rmsprop)" },
  { "nesterov", NL_RUN_FIELD_BOOL, OFF (optim.nesterov), S | OPT, NAN, NULL, 0, 1, 0, "Nesterov momentum (sgd)" },
  { "wd", NL_RUN_FIELD_FLOAT, OFF (optim.wd), S | OPT | HI, NAN, NULL, 0, INF, NAN, "Weight decay" },
  { "beta1", NL_RUN_FIELD_FLOAT, OFF (optim.beta1), S | OPT | HI, NAN, NULL, 0, 1, NAN,
    "Decay of the mean of gradients (adam, adamw)" },
  { "beta2", NL_RUN_FIELD_FLOAT, OFF (optim.beta2), S | OPT | HI, NAN, NULL, 0, 1, NAN,
    "Decay of the mean of squared gradients (adam, adamw)" },
  { "epsilon", NL_RUN_FIELD_FLOAT, OFF (optim.epsilon), S | OPT | LO, NAN, NULL, 0, 1, NAN,
    "Added to the denominator (adam, adamw, rmsprop, adagrad)" },
  { "rho", NL_RUN_FIELD_FLOAT, OFF (optim.rho), S | OPT | HI, NAN, NULL, 0, 1, NAN,
    "Decay of the mean of squared gradients (rmsprop)" },
  { "centered", NL_RUN_FIELD_BOOL, OFF (optim.centered), S | OPT, NAN, NULL, 0, 1, 0,
    "Normalise by the variance of gradients (rmsprop)" },
  { "clip_gradient", NL_RUN_FIELD_FLOAT, OFF (optim.clip_gradient), S | OPT | LO | HI, NAN, NULL, -INF, INF, 0,
    "Per-element gradient clip; <= 0 is off" },
  { "clip_global_norm", NL_RUN_FIELD_FLOAT, OFF (optim.clip_global_norm), S | OPT | HI, NAN, NULL, 0, INF, 0,
    "Clip gradients by their global L2 norm; 0 is off" },
  { "lr_schedule", NL_RUN_FIELD_STRING, OFF (lr_schedule), S, 0, NULL, 0, 0, NAN,
    "constant (none), factor:STEP:F, multifactor:S1,S2:F, cosine[:FINAL], poly[:P[:FINAL]], each +warmup:STEPS" },
  { "seed", NL_RUN_FIELD_SEED, OFF (seed), S, 0, NULL, 0, 18446744073709551615.0, 0,
    "Random seed for initialisation, shuffling and dropout" },
  { "threads", NL_RUN_FIELD_INT, OFF (threads), S, 0, NULL, 0, 1024, 0, "Worker threads (0: all cores)" },
  { "loss", NL_RUN_FIELD_STRING, OFF (loss), S, 0, "SoftmaxCrossEntropy", 0, 0, NAN,
    "Loss appended when the network has none" },
  { "mean", NL_RUN_FIELD_FLOAT, OFF (mean), S | LO | HI, 0.13, NULL, -INF, INF, 0, "Input normalisation mean" },
  { "std", NL_RUN_FIELD_FLOAT, OFF (std), S | LO | HI, 0.31, NULL, 0, INF, 1, "Input normalisation std" },
  { "eval_batch_size", NL_RUN_FIELD_INT, OFF (eval_batch_size), S, 500, NULL, 1, 1 << 20, 500,
    "Samples per evaluation batch" },
  { "workers", NL_RUN_FIELD_INT, OFF (workers), S, 1, NULL, 0, NL_LOADER_MAX_WORKERS, 1,
    "Loader threads (0: load in the training thread)" },
  { "augment", NL_RUN_FIELD_STRING, OFF (augment), S, 0, NULL, 0, 0, NAN, "Training transforms, comma-separated" },
  { "label_column", NL_RUN_FIELD_STRING, OFF (data.label_column), S, 0, NULL, 0, 0, NAN,
    "csv: the label column by name or 0-based index (NULL: the last)" },
  { "image_width", NL_RUN_FIELD_INT, OFF (data.image_width), S, 0, NULL, 0, 16384, 0,
    "folder: resize to this width (0: the first image's)" },
  { "image_height", NL_RUN_FIELD_INT, OFF (data.image_height), S, 0, NULL, 0, 16384, 0,
    "folder: resize to this height (0: the first image's)" },
  { "regression", NL_RUN_FIELD_BOOL, OFF (data.regression), S, 0, NULL, 0, 1, 0, "csv: the label is a real value" },
  { "val_fraction", NL_RUN_FIELD_DOUBLE, OFF (data.val_fraction), S | HI, 0.1, NULL, 0, 1, 0.1,
    "csv, folder: share held out for evaluation" },
  { "precision", NL_RUN_FIELD_PRECISION, OFF (precision), S, 0, "fp32", 0, 0, NAN, "fp32, bf16 or fp16" },
  { "loss_scale", NL_RUN_FIELD_FLOAT, OFF (loss_scale), S | HI, 0, NULL, 0, INF, 0,
    "fp16: the first dynamic loss scale (0: 65536)" },
  { "layer_stats_every", NL_RUN_FIELD_INT, OFF (layer_stats_every), S, NL_LAYER_STATS_DEFAULT_EVERY, NULL, 0,
    1000000000, NAN, "Layer statistics every N steps: norms, update ratios, histograms, activations (0: off)" },
  /* GPU execution (issue 23): runs before them read the defaults */
  { "cudnn_autotune", NL_RUN_FIELD_BOOL, OFF (cudnn_autotune), S, 1, NULL, 0, 1, NAN,
    "cuda: time cuDNN's convolution algorithms once per shape and keep the fastest (cached on disk)" },
  { "cuda_graphs", NL_RUN_FIELD_BOOL, OFF (cuda_graphs), S, 1, NULL, 0, 1, NAN,
    "cuda: capture the training step once as a CUDA graph and replay it" },
  { "deterministic", NL_RUN_FIELD_BOOL, OFF (deterministic), S, 0, NULL, 0, 1, NAN,
    "cuda: deterministic cuDNN algorithms only (the same bits run to run)" },
  /* sequence data (issue 21): runs before them read the defaults */
  { "text_column", NL_RUN_FIELD_STRING, OFF (data.text_column), S, 0, NULL, 0, 0, NAN,
    "text: the column holding the texts, by header name (default: text)" },
  { "tokenizer", NL_RUN_FIELD_TOKENIZER, OFF (data.tokenizer), S, 0, "word", 0, 0, NAN,
    "text, text-lm: word (lower-cased, split at what is not a letter or digit) or char" },
  { "vocab_size", NL_RUN_FIELD_INT, OFF (data.vocab_size), S, 20000, NULL, 2, 10000000, NAN,
    "text, text-lm: tokens in the vocabulary, <pad> and <unk> included (built from the training side)" },
  { "min_count", NL_RUN_FIELD_INT, OFF (data.min_count), S, 1, NULL, 1, 1000000000, NAN,
    "text, text-lm: a token seen fewer times is <unk>" },
  { "max_length", NL_RUN_FIELD_INT, OFF (data.max_length), S, 128, NULL, 1, 1 << 20, NAN,
    "text, text-lm: tokens per sample (longer texts are truncated, shorter ones padded)" },
  { "target", NL_RUN_FIELD_STRING, OFF (data.target_column), S, 0, NULL, 0, 0, NAN,
    "series: the column to predict, by header name (default: the last numeric one)" },
  { "window", NL_RUN_FIELD_INT, OFF (data.window), S, 32, NULL, 1, 1 << 20, NAN,
    "series: past steps each prediction sees" },
  { "horizon", NL_RUN_FIELD_INT, OFF (data.horizon), S, 1, NULL, 1, 1 << 20, NAN,
    "series: future values of the target predicted" },
  /* not stored with the run */
  { "scheduler_workers", NL_RUN_FIELD_INT, OFF (scheduler_workers), 0, 0, NULL, 0, 1024, NAN,
    "Threads for independent branches (0: ops inline, in order)" },
  { "preload", NL_RUN_FIELD_BOOL, OFF (preload), 0, 0, NULL, 0, 1, NAN,
    "Benchmark baseline: load each epoch into memory before timing it" },
  { "val_dataset", NL_RUN_FIELD_STRING, OFF (val_dataset), 0, 0, NULL, 0, 0, NAN,
    "Evaluate on all of this dataset instead of the test split" },
  { "device", NL_RUN_FIELD_DEVICE, OFF (device), 0, 0, "cpu", 0, 0, NAN, "cpu, cuda or cuda:N" },
  { "keep_last", NL_RUN_FIELD_INT, OFF (keep_last), 0, 3, NULL, 1, 100000, NAN,
    "Newest checkpoints kept besides the best" },
  { "checkpoint_interval", NL_RUN_FIELD_DOUBLE, OFF (checkpoint_interval), 0, 600, NULL, 0, 1e9, NAN,
    "Seconds between checkpoints inside an epoch (0: off)" },
  { "monitor", NL_RUN_FIELD_METRIC, OFF (monitor), 0, 0, NULL, 0, 0, NAN,
    "What the best checkpoint is best at: test_accuracy, train_accuracy or train_loss" },
  { "restore_best", NL_RUN_FIELD_BOOL, OFF (restore_best), 0, 0, NULL, 0, 1, NAN,
    "End with the best epoch's weights as the newest checkpoint" },
  { "early_stop_metric", NL_RUN_FIELD_METRIC, OFF (early_stop_metric), 0, 0, NULL, 0, 0, NAN,
    "Stop when this metric stops improving (NULL: never)" },
  { "patience", NL_RUN_FIELD_INT, OFF (patience), 0, 3, NULL, 0, 100000, NAN,
    "Epochs without improvement before early stopping" },
  { "min_delta", NL_RUN_FIELD_DOUBLE, OFF (min_delta), HI, 0, NULL, 0, INF, NAN,
    "Smallest change that counts as an improvement" },
};

const NlRunField *
nl_run_config_fields (guint *n_fields)
{
  *n_fields = G_N_ELEMENTS (fields);
  return fields;
}

const NlRunField *
nl_run_config_find_field (const char *name)
{
  for (gsize i = 0; name && i < G_N_ELEMENTS (fields); i++)
    if (!strcmp (fields[i].name, name))
      return &fields[i];
  return NULL;
}

#define AT(rc, f, type) ((type *) ((char *) (rc) + (f)->offset))
#define AT_C(rc, f, type) ((const type *) ((const char *) (rc) + (f)->offset))

double
nl_run_field_get_number (const NlRunField *f, const NlRunConfig *rc)
{
  switch (f->type)
    {
    case NL_RUN_FIELD_INT: return *AT_C (rc, f, int);
    case NL_RUN_FIELD_SEED: return (double) *AT_C (rc, f, guint64);
    case NL_RUN_FIELD_FLOAT: return *AT_C (rc, f, float);
    case NL_RUN_FIELD_DOUBLE: return *AT_C (rc, f, double);
    case NL_RUN_FIELD_BOOL: return *AT_C (rc, f, gboolean) != 0;
    default: return NAN;
    }
}

void
nl_run_field_set_number (const NlRunField *f, NlRunConfig *rc, double v)
{
  switch (f->type)
    {
    case NL_RUN_FIELD_INT: *AT (rc, f, int) = (int) v; break;
    case NL_RUN_FIELD_SEED: *AT (rc, f, guint64) = (guint64) v; break;
    case NL_RUN_FIELD_FLOAT: *AT (rc, f, float) = (float) v; break;
    case NL_RUN_FIELD_DOUBLE: *AT (rc, f, double) = v; break;
    case NL_RUN_FIELD_BOOL: *AT (rc, f, gboolean) = v != 0; break;
    default: g_return_if_reached ();
    }
}

static gboolean
is_text (const NlRunField *f)
{
  return f->type == NL_RUN_FIELD_STRING || f->type == NL_RUN_FIELD_METRIC;
}

static gboolean
is_number (const NlRunField *f)
{
  return f->type <= NL_RUN_FIELD_BOOL;
}

void
nl_run_config_set_text (char **slot, const char *s)
{
  char *copy = g_strdup (s);
  g_free (*slot);
  *slot = copy;
}

void
nl_run_config_set_policy (NlRunConfig *dst, const NlRunConfig *src)
{
  dst->keep_last = src->keep_last;
  dst->checkpoint_interval = src->checkpoint_interval;
  nl_run_config_set_text (&dst->monitor, src->monitor);
  dst->restore_best = src->restore_best;
  nl_run_config_set_text (&dst->early_stop_metric, src->early_stop_metric);
  dst->patience = src->patience;
  dst->min_delta = src->min_delta;
}

void
nl_run_config_set_optimizer (NlRunConfig *rc, NlOptimKind kind)
{
  nl_optim_config_init (&rc->optim, kind);
  if (kind == NL_OPTIM_SGD)
    rc->optim.lr = 0.1f;
}

void
nl_run_config_set_dataset (NlRunConfig *rc, const char *spec)
{
  const NlDatasetKind *kind = nl_dataset_kind_lookup (spec, NULL);
  nl_run_config_set_text (&rc->dataset, spec);
  rc->mean = kind ? kind->mean : 0.0f;
  rc->std = kind ? kind->std : 1.0f;
}

void
nl_run_config_init (NlRunConfig *rc)
{
  memset (rc, 0, sizeof *rc);
  nl_run_config_set_optimizer (rc, NL_OPTIM_SGD);
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      const NlRunField *f = &fields[i];
      if (is_text (f))
        *AT (rc, f, char *) = g_strdup (f->def_text);
      else if (is_number (f) && !(f->flags & NL_RUN_FIELD_OPTIM_DEFAULT))
        nl_run_field_set_number (f, rc, f->def);
    }
  /* optimizer sgd, precision fp32, device cpu and tokenizer word are the zeros */
  G_STATIC_ASSERT (NL_OPTIM_SGD == 0 && NL_PRECISION_F32 == 0 && NL_DEVICE_CPU == 0 && NL_TOKENIZER_WORD == 0);
}

void
nl_run_config_clear (NlRunConfig *rc)
{
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    if (is_text (&fields[i]))
      g_clear_pointer (AT (rc, &fields[i], char *), g_free);
}

void
nl_run_config_copy (NlRunConfig *dst, const NlRunConfig *src)
{
  *dst = *src;
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    if (is_text (&fields[i]))
      *AT (dst, &fields[i], char *) = g_strdup (*AT_C (src, &fields[i], char *));
}

gboolean
nl_run_field_set_text (const NlRunField *f, NlRunConfig *rc, const char *text, GError **error)
{
  char *end = NULL;
  double v;

  g_return_val_if_fail (f != NULL && rc != NULL && text != NULL, FALSE);
  switch (f->type)
    {
    case NL_RUN_FIELD_OPTIMIZER:
      {
        NlOptimKind kind;
        if (!nl_optim_kind_parse (text, &kind, error))
          return FALSE;
        nl_run_config_set_optimizer (rc, kind);
        return TRUE;
      }
    case NL_RUN_FIELD_PRECISION:
      if (nl_precision_parse (text, &rc->precision))
        return TRUE;
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "%s must be fp32, bf16 or fp16, not '%s'",
                   f->name, text);
      return FALSE;
    case NL_RUN_FIELD_DEVICE:
      return nl_device_parse (text, &rc->device, error);
    case NL_RUN_FIELD_TOKENIZER:
      if (*text && nl_tokenizer_kind_parse (text, AT (rc, f, NlTokenizerKind)))
        return TRUE;
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "%s must be word or char, not '%s'", f->name, text);
      return FALSE;
    case NL_RUN_FIELD_STRING:
    case NL_RUN_FIELD_METRIC:
      nl_run_config_set_text (AT (rc, f, char *), text);
      return TRUE;
    case NL_RUN_FIELD_BOOL:
      if (!g_ascii_strcasecmp (text, "true") || !strcmp (text, "1") || !g_ascii_strcasecmp (text, "false")
          || !strcmp (text, "0"))
        {
          *AT (rc, f, gboolean) = !g_ascii_strcasecmp (text, "true") || !strcmp (text, "1");
          return TRUE;
        }
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "%s must be true or false, not '%s'", f->name, text);
      return FALSE;
    default:
      v = g_ascii_strtod (text, &end);
      if (end == text || *end || isnan (v)
          || ((f->type == NL_RUN_FIELD_INT || f->type == NL_RUN_FIELD_SEED) && v != floor (v)))
        {
          g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "%s must be %s, not '%s'", f->name,
                       f->type == NL_RUN_FIELD_INT || f->type == NL_RUN_FIELD_SEED ? "an integer" : "a number", text);
          return FALSE;
        }
      nl_run_field_set_number (f, rc, v);
      return TRUE;
    }
}

gboolean
nl_run_field_check (const NlRunField *f, const char *as, double v, GError **error)
{
  gboolean lo_open = f->flags & NL_RUN_FIELD_MIN_OPEN, hi_open = f->flags & NL_RUN_FIELD_MAX_OPEN;
  const char *name = as ? as : f->name;

  if ((lo_open ? v > f->min : v >= f->min) && (hi_open ? v < f->max : v <= f->max))
    return TRUE;
  if (isinf (f->min) && isinf (f->max))
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "%s must be a number, not %g", name, v);
  else if (isinf (f->max) || (v <= f->min && f->max >= 1e6))
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, lo_open ? "%s must be > %g, not %g"
                 : "%s must be at least %g, not %g", name, f->min, v);
  else
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "%s must be in %c%g, %g%c, not %g", name,
                 lo_open ? '(' : '[', f->min, f->max, hi_open ? ')' : ']', v);
  return FALSE;
}

static gboolean
metric_known (const char *name)
{
  return !name || !strcmp (name, "test_accuracy") || !strcmp (name, "train_accuracy")
         || !strcmp (name, "train_loss");
}

gboolean
nl_run_config_check (const NlRunConfig *rc, GError **error)
{
  g_return_val_if_fail (rc != NULL, FALSE);
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      const NlRunField *f = &fields[i];
      if (f->type == NL_RUN_FIELD_METRIC && !metric_known (*AT_C (rc, f, char *)))
        {
          g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                       "unknown %s '%s' (test_accuracy, train_accuracy or train_loss)",
                       !strcmp (f->name, "monitor") ? "checkpoint metric" : "early stopping metric",
                       *AT_C (rc, f, char *));
          return FALSE;
        }
      if (is_number (f) && f->type != NL_RUN_FIELD_BOOL && f->type != NL_RUN_FIELD_SEED
          && !nl_run_field_check (f, NULL, nl_run_field_get_number (f, rc), error))
        return FALSE;
    }
  if (rc->optim.kind >= NL_OPTIM_COUNT || rc->precision >= NL_PRECISION_COUNT)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "unknown optimizer or precision");
      return FALSE;
    }
  if (!rc->dataset || !rc->loss)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the run's settings lack a dataset or a loss");
      return FALSE;
    }
  return TRUE;
}

/* ---- the stored settings ---- */

char *
nl_run_config_to_json (const NlRunConfig *rc)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      const NlRunField *f = &fields[i];
      if (!(f->flags & NL_RUN_FIELD_STORED))
        continue;
      json_builder_set_member_name (b, f->name);
      switch (f->type)
        {
        case NL_RUN_FIELD_INT:
          json_builder_add_int_value (b, *AT_C (rc, f, int));
          break;
        case NL_RUN_FIELD_SEED:
          {
            char seed[32];
            g_snprintf (seed, sizeof seed, "%" G_GUINT64_FORMAT, *AT_C (rc, f, guint64));
            json_builder_add_string_value (b, seed); /* as text: 64-bit exact */
            break;
          }
        case NL_RUN_FIELD_FLOAT:
        case NL_RUN_FIELD_DOUBLE:
          json_builder_add_double_value (b, nl_run_field_get_number (f, rc));
          break;
        case NL_RUN_FIELD_BOOL:
          json_builder_add_boolean_value (b, *AT_C (rc, f, gboolean));
          break;
        case NL_RUN_FIELD_OPTIMIZER:
          json_builder_add_string_value (b, nl_optim_kind_name (rc->optim.kind));
          break;
        case NL_RUN_FIELD_PRECISION:
          json_builder_add_string_value (b, nl_precision_name (rc->precision));
          break;
        case NL_RUN_FIELD_TOKENIZER:
          json_builder_add_string_value (b, nl_tokenizer_kind_name (*AT_C (rc, f, NlTokenizerKind)));
          break;
        case NL_RUN_FIELD_STRING:
        case NL_RUN_FIELD_METRIC:
          if (*AT_C (rc, f, char *))
            json_builder_add_string_value (b, *AT_C (rc, f, char *));
          else
            json_builder_add_null_value (b);
          break;
        case NL_RUN_FIELD_DEVICE:
        default:
          g_return_val_if_reached (NULL);
        }
    }
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return nl_json_fix_numbers (json_generator_to_data (gen, NULL));
}

/* Every stored member of the type its field reads (null for a text that
 * is not set): json-glib's getters raise criticals on another type, and a
 * project is anyone's file. */
static gboolean
check_member_types (JsonObject *o, GError **error)
{
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      const NlRunField *f = &fields[i];
      JsonNode *n = json_object_get_member (o, f->name);
      GType t = n && JSON_NODE_HOLDS_VALUE (n) ? json_node_get_value_type (n) : G_TYPE_INVALID;
      const char *want = NULL;
      if (!n || !(f->flags & NL_RUN_FIELD_STORED))
        continue;
      switch (f->type)
        {
        case NL_RUN_FIELD_INT:
          want = t == G_TYPE_INT64 ? NULL : "a whole number";
          break;
        case NL_RUN_FIELD_FLOAT:
        case NL_RUN_FIELD_DOUBLE:
          want = t == G_TYPE_INT64 || t == G_TYPE_DOUBLE ? NULL : "a number";
          break;
        case NL_RUN_FIELD_BOOL:
          want = t == G_TYPE_BOOLEAN || t == G_TYPE_INT64 ? NULL : "true or false";
          break;
        case NL_RUN_FIELD_STRING:
        case NL_RUN_FIELD_METRIC:
          want = t == G_TYPE_STRING || JSON_NODE_HOLDS_NULL (n) ? NULL : "a string";
          break;
        default:
          want = t == G_TYPE_STRING ? NULL : "a string";
          break;
        }
      if (want)
        {
          g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the run's settings: \"%s\" must be %s", f->name,
                       want);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
nl_run_config_from_json (NlRunConfig *rc, const char *json, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;
  NlOptimKind kind;

  if (!nl_json_check_depth (json, -1, "the run's settings", error)
      || !json_parser_load_from_data (parser, json, -1, error))
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the run's settings are not a JSON object");
      return FALSE;
    }
  o = json_node_get_object (json_parser_get_root (parser));
  if (!check_member_types (o, error))
    return FALSE;
  /* first: the optimizer's defaults stand for its absent fields */
  if (!nl_optim_kind_parse (json_object_get_string_member_with_default (o, "optimizer", "sgd"), &kind, error))
    return FALSE;
  nl_optim_config_init (&rc->optim, kind);
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      const NlRunField *f = &fields[i];
      double absent = isnan (f->absent) ? nl_run_field_get_number (f, rc) : f->absent;
      if (!(f->flags & NL_RUN_FIELD_STORED))
        continue;
      switch (f->type)
        {
        case NL_RUN_FIELD_INT:
          *AT (rc, f, int) = (int) json_object_get_int_member_with_default (o, f->name, (gint64) absent);
          break;
        case NL_RUN_FIELD_SEED:
          *AT (rc, f, guint64)
            = g_ascii_strtoull (json_object_get_string_member_with_default (o, f->name, "0"), NULL, 10);
          break;
        case NL_RUN_FIELD_FLOAT:
        case NL_RUN_FIELD_DOUBLE:
          nl_run_field_set_number (f, rc, json_object_get_double_member_with_default (o, f->name, absent));
          break;
        case NL_RUN_FIELD_BOOL:
          *AT (rc, f, gboolean) = json_object_get_boolean_member_with_default (o, f->name, absent != 0);
          break;
        case NL_RUN_FIELD_STRING:
        case NL_RUN_FIELD_METRIC:
          nl_run_config_set_text (AT (rc, f, char *), json_object_get_string_member_with_default (o, f->name, NULL));
          break;
        case NL_RUN_FIELD_PRECISION:
          {
            /* runs stored before precision existed read as fp32 */
            const char *prec = json_object_get_string_member_with_default (o, f->name, f->def_text);
            if (!nl_precision_parse (prec, &rc->precision))
              {
                g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                             "unknown precision '%s' in the run's settings (fp32, bf16 or fp16)", prec);
                return FALSE;
              }
            break;
          }
        case NL_RUN_FIELD_TOKENIZER:
          {
            const char *name = json_object_get_string_member_with_default (o, f->name, f->def_text);
            if (!*name || !nl_tokenizer_kind_parse (name, AT (rc, f, NlTokenizerKind)))
              {
                g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                             "unknown tokenizer '%s' in the run's settings (word or char)", name);
                return FALSE;
              }
            break;
          }
        case NL_RUN_FIELD_OPTIMIZER:
        default:
          break;
        }
    }
  if (!rc->dataset || !rc->loss)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the run's settings lack a dataset or a loss");
      return FALSE;
    }
  return TRUE;
}

/* ---- overrides: what a fork changes ---- */

/* The schedule in its normalised form, to compare two specs. */
static char *
schedule_normal (const char *spec)
{
  g_autoptr (NlLrSchedule) s = nl_lr_schedule_new (spec ? spec : "constant", 1, G_MAXINT32, NULL);
  return g_strdup (s ? nl_lr_schedule_describe (s) : spec);
}

static gboolean
same_member (const char *key, JsonNode *f, JsonNode *p)
{
  if (!strcmp (key, "lr_schedule"))
    {
      g_autofree char *a = schedule_normal (p && !JSON_NODE_HOLDS_NULL (p) ? json_node_get_string (p) : NULL);
      g_autofree char *z = schedule_normal (JSON_NODE_HOLDS_NULL (f) ? NULL : json_node_get_string (f));
      return g_strcmp0 (a, z) == 0;
    }
  if (p && JSON_NODE_HOLDS_VALUE (f) && JSON_NODE_HOLDS_VALUE (p) && json_node_get_value_type (f) == G_TYPE_DOUBLE)
    {
      double x = json_node_get_double (f), y = json_node_get_double (p);
      return fabs (x - y) <= 1e-6 * MAX (fabs (x), fabs (y));
    }
  return p && json_node_equal (f, p);
}

char *
nl_run_config_overrides_json (const NlRunConfig *parent, const NlRunConfig *child, const char *const *keys)
{
  g_autofree char *parent_json = nl_run_config_to_json (parent), *child_json = nl_run_config_to_json (child);
  g_autoptr (JsonParser) pp = json_parser_new (), cp = json_parser_new ();
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  JsonObject *po, *co;

  /* both written just now: they parse */
  if (!json_parser_load_from_data (pp, parent_json, -1, NULL) || !json_parser_load_from_data (cp, child_json, -1, NULL))
    g_return_val_if_reached (NULL);
  po = json_node_get_object (json_parser_get_root (pp));
  co = json_node_get_object (json_parser_get_root (cp));
  json_builder_begin_object (b);
  /* in the order of KEYS, else of the table */
  for (gsize i = 0; keys ? keys[i] != NULL : i < G_N_ELEMENTS (fields); i++)
    {
      const char *key = keys ? keys[i] : fields[i].name;
      JsonNode *f = json_object_get_member (co, key);
      if (!f || same_member (key, f, json_object_get_member (po, key)))
        continue;
      json_builder_set_member_name (b, key);
      json_builder_add_value (b, json_node_copy (f));
    }
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return nl_json_fix_numbers (json_generator_to_data (gen, NULL));
}
