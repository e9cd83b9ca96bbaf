/* nl-run-config.h — everything one training run is set up with: data,
 * optimizer, schedule, device, and the checkpoint policy and early
 * stopping of a stored run. It owns its strings. One table of fields
 * (name, type, default, limits, doc) gives the defaults, the checks, the
 * stored JSON and the ranges the CLI and the GUI offer. */
#pragma once

#include <glib.h>

#include "engine/data/nl-dataset.h"
#include "engine/graph/nl-graph.h"
#include "engine/train/nl-optim.h"

G_BEGIN_DECLS

#define NL_TRAIN_ERROR (nl_train_error_quark ())
/* Layer statistics every this many updates by default: measured to cost
 * at most 3% of training time (notes: lenet and mlp on Fashion-MNIST). */
#define NL_LAYER_STATS_DEFAULT_EVERY 100
GQuark nl_train_error_quark (void);
typedef enum {
  NL_TRAIN_ERROR_CONFIG,
  NL_TRAIN_ERROR_DIVERGED,   /* NaN or Inf loss */
  NL_TRAIN_ERROR_CANCELLED,
} NlTrainErrorCode;

typedef struct {
  char *dataset;             /* a dataset spec: "fashion-mnist[:DIR]", "csv:FILE" */
  int epochs;
  int batch_size;
  NlOptimConfig optim;
  char *lr_schedule;         /* NULL or "constant", "cosine", ... (nl-lr-schedule.h) */
  guint64 seed;
  int threads;               /* 0: all cores */
  char *loss;                /* loss appended when the network has none */
  float mean, std;           /* input normalisation */
  int eval_batch_size;
  NlDatasetOptions data;     /* CSV label column (owned), image size, validation fraction */
  int workers;               /* loader threads (0: load in the training thread) */
  int scheduler_workers;     /* 0: ops run inline in order; N: independent branches on N threads */
  gboolean preload;          /* benchmark baseline: load each epoch's batches into memory before
                                its timed loop, so the loop is fed from memory */
  char *augment;             /* training transforms, e.g. "random-crop:28:4,flip" (nl-transform.h) */
  char *val_dataset;         /* evaluate on this dataset (all of it) instead of the test split */
  NlDevice device;           /* cpu (default) or cuda:N (core/nl-device.h) */
  NlPrecision precision;     /* fp32 (default), bf16 or fp16 autocast of Dense and Conv2D */
  float loss_scale;          /* fp16: the first dynamic loss scale (0: 65536); bf16 and fp32 need none */
  int layer_stats_every;     /* layer statistics every N updates (0: off; nl-layer-stats.h) */
  /* CUDA only (the CPU's results are the same bytes either way) */
  gboolean cudnn_autotune;   /* time cuDNN's convolution algorithms once per shape (default on) */
  gboolean cuda_graphs;      /* replay the training step as one captured CUDA graph (default on) */
  gboolean deterministic;    /* deterministic cuDNN algorithms only (default off) */

  /* A stored run's checkpoint policy and early stopping (not part of its
   * stored settings: resume and fork take them anew). */
  int keep_last;             /* epoch checkpoints kept besides the best (default 3) */
  double checkpoint_interval; /* seconds between checkpoints inside epochs (default 600; 0: off); only
                                the newest such checkpoint is kept */
  char *monitor;             /* what "best" means: test_accuracy (NULL: default, max), train_accuracy
                                (max) or train_loss (min) */
  gboolean restore_best;     /* end with the best epoch's weights as the newest checkpoint (Keras'
                                restore_best_weights): export, fork and resume then start from them */
  /* NULL is off, else a metric named like `monitor`. The run ends (status
   * finished, message "early stopping at epoch N (best M at epoch K)")
   * once `patience` epochs in a row (0 counts as 1) did not improve on the
   * best value by more than min_delta. It also sets what "best" means when
   * monitor is NULL. */
  char *early_stop_metric;
  int patience;
  double min_delta;
} NlRunConfig;

typedef enum {
  NL_RUN_FIELD_INT,
  NL_RUN_FIELD_SEED,         /* guint64, stored as text (64 bits exact) */
  NL_RUN_FIELD_FLOAT,
  NL_RUN_FIELD_DOUBLE,
  NL_RUN_FIELD_BOOL,
  NL_RUN_FIELD_STRING,       /* char *, NULL allowed */
  NL_RUN_FIELD_OPTIMIZER,    /* NlOptimKind by name */
  NL_RUN_FIELD_PRECISION,    /* NlPrecision by name */
  NL_RUN_FIELD_DEVICE,       /* NlDevice ("cpu", "cuda:N") */
  NL_RUN_FIELD_METRIC,       /* char *: NULL, test_accuracy, train_accuracy or train_loss */
  NL_RUN_FIELD_TOKENIZER,    /* NlTokenizerKind by name (nl-tokenizer.h) */
} NlRunFieldType;

typedef enum {
  NL_RUN_FIELD_STORED = 1 << 0,     /* in the run's stored settings (hparams JSON) */
  NL_RUN_FIELD_OPTIM_DEFAULT = 1 << 1, /* the default is the optimizer's (nl_optim_config_init) */
  NL_RUN_FIELD_MIN_OPEN = 1 << 2,   /* value > min, not >= */
  NL_RUN_FIELD_MAX_OPEN = 1 << 3,   /* value < max, not <= */
} NlRunFieldFlags;

typedef struct {
  const char *name;          /* the stored JSON key */
  NlRunFieldType type;
  gsize offset;              /* in NlRunConfig */
  guint flags;               /* NlRunFieldFlags */
  double def;                /* numbers and booleans: nl_run_config_init's value */
  const char *def_text;      /* strings and named values: nl_run_config_init's value */
  double min, max;           /* numbers: the valid range (see the _OPEN flags) */
  double absent;             /* stored settings without the key: this value (NAN: the default;
                                strings: NULL) — how older runs read */
  const char *doc;           /* one line */
} NlRunField;

/* The table, in stored order; *n_fields is its length. */
const NlRunField *nl_run_config_fields (guint *n_fields);
/* The field called NAME, or NULL. */
const NlRunField *nl_run_config_find_field (const char *name);
/* FALSE with an error "AS must be ..., not V" when V is out of f's range
 * (AS: how the caller names it, e.g. "--epochs"; NULL: the field's name). */
gboolean nl_run_field_check (const NlRunField *f, const char *as, double v, GError **error);
/* A number field's value in rc (bools as 0/1). */
double nl_run_field_get_number (const NlRunField *f, const NlRunConfig *rc);
/* Sets a number field of rc (ints truncate; bools: v != 0). */
void nl_run_field_set_number (const NlRunField *f, NlRunConfig *rc, double v);
/* Sets any field from TEXT as a user writes it ("0.01", "adam", "bf16",
 * "true", "cuda:0", a schedule); an optimizer takes its own defaults
 * (nl_run_config_set_optimizer). FALSE with an error naming the field when
 * TEXT is no value of it (limits are nl_run_field_check's business). */
gboolean nl_run_field_set_text (const NlRunField *f, NlRunConfig *rc, const char *text, GError **error);

void nl_run_config_init (NlRunConfig *rc);
void nl_run_config_clear (NlRunConfig *rc);
/* dst (cleared or uninitialised) becomes a deep copy of src. */
void nl_run_config_copy (NlRunConfig *dst, const NlRunConfig *src);
/* *slot (a string field of a config) becomes a copy of s. */
void nl_run_config_set_text (char **slot, const char *s);
/* Each field within its limits and each named value known; FALSE with an
 * error naming the first bad field. */
gboolean nl_run_config_check (const NlRunConfig *rc, GError **error);
/* dst takes src's checkpoint policy and early stopping (keep_last,
 * checkpoint_interval, monitor, restore_best, early_stop_metric,
 * patience, min_delta). */
void nl_run_config_set_policy (NlRunConfig *dst, const NlRunConfig *src);
/* The optimizer KIND with its defaults (SGD: rate 0.1 rather than 0.01,
 * netloom's default for new runs). */
void nl_run_config_set_optimizer (NlRunConfig *rc, NlOptimKind kind);
/* The dataset SPEC and its kind's input normalisation (nl-dataset-kind.h;
 * 0 / 1 for a spec of no known kind). */
void nl_run_config_set_dataset (NlRunConfig *rc, const char *spec);

/* The stored settings (the fields flagged STORED, in table order). */
char *nl_run_config_to_json (const NlRunConfig *rc);
/* rc (initialised) takes the stored settings; absent keys read as older
 * runs need (see NlRunField.absent). FALSE for bad JSON, an unknown
 * optimizer or precision, or no dataset or loss. */
gboolean nl_run_config_from_json (NlRunConfig *rc, const char *json, GError **error);
/* A JSON object of the stored settings named in KEYS (NULL-terminated;
 * NULL: all) in which CHILD differs from PARENT, as CHILD stores them:
 * what nl_session_new_fork takes as overrides. Numbers within a relative
 * 1e-6 and schedules that describe the same rates count as the same. */
char *nl_run_config_overrides_json (const NlRunConfig *parent, const NlRunConfig *child, const char *const *keys);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (NlRunConfig, nl_run_config_clear)

G_END_DECLS
