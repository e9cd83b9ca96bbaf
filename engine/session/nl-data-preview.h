/* nl-data-preview.h — what the Data page needs of engine/data: the dataset
 * kinds a pipeline can name (nl-dataset-kind.h's table, included here),
 * the transform catalogue (each transform's parameters, for the list
 * editor), the pipeline options kept in extra_json, and a preview: a few
 * samples after the transforms, the class histogram and the dataset's
 * summary. GLib only; loading is meant for a worker thread (everything
 * here is thread-safe; a preview is immutable). */
#pragma once

#include <gio/gio.h>

#include "core/nl-tensor.h"
#include "engine/data/nl-dataset-kind.h"
#include "projects/nl-project.h"

G_BEGIN_DECLS

/* ---- transforms: a machine-readable form of nl-transform.h's specs ---- */

typedef enum {
  NL_TRANSFORM_PARAM_INT,     /* a whole number in [min, max] */
  NL_TRANSFORM_PARAM_DOUBLE,  /* a real number in [min, max] */
  NL_TRANSFORM_PARAM_SIZE,    /* "N" (NxN) or "WxH", positive */
  NL_TRANSFORM_PARAM_VALUES,  /* "V" or "V1/V2/..." (one per channel) */
} NlTransformParamType;

#define NL_TRANSFORM_MAX_PARAMS 2

typedef struct {
  const char *name;          /* "size", "padding", "amount", "mean", "std" */
  const char *title;         /* "Size", ... */
  NlTransformParamType type;
  double min, max, step;     /* INT and DOUBLE */
  int digits;                /* DOUBLE: decimals shown */
  const char *default_value; /* as text */
  gboolean optional;         /* may be left out of the spec (random-crop's padding) */
  const char *doc;           /* one line */
} NlTransformParamInfo;

typedef struct {
  const char *name;          /* as in the spec: "random-crop" */
  const char *title;         /* "Random crop" */
  const char *doc;           /* one line */
  int n_params;
  NlTransformParamInfo params[NL_TRANSFORM_MAX_PARAMS];
} NlTransformSpecInfo;

/* Every transform nl_transform_parse accepts, in menu order. */
const NlTransformSpecInfo *nl_data_transforms (int *n);
const NlTransformSpecInfo *nl_data_transform_lookup (const char *name);

/* One item of a transform list as the editor holds it: its transform and
 * the text of each parameter ("" for an optional one left out). */
typedef struct {
  const NlTransformSpecInfo *info;
  char *values[NL_TRANSFORM_MAX_PARAMS];
} NlTransformStep;

/* A step with the defaults; sizes default to the sample's H x W when
 * sample_shape (may be NULL) is an image shape. */
NlTransformStep *nl_transform_step_new (const NlTransformSpecInfo *info, const NlShape *sample_shape);
void nl_transform_step_free (NlTransformStep *step);
/* "random-crop:28:4", "flip" */
char *nl_transform_step_to_string (const NlTransformStep *step);
/* NlTransformStep* of SPEC ("" and NULL: none); NULL with an
 * NL_DATA_ERROR_SPEC error quoting the bad item when nl_transform_parse
 * would refuse it. */
GPtrArray *nl_transform_steps_parse (const char *spec, GError **error);
/* The spec of STEPS: items joined by ','; "" when empty. */
char *nl_transform_steps_to_spec (GPtrArray *steps);
/* NULL when SPEC parses, else why not (g_free). */
char *nl_transform_spec_problem (const char *spec);

/* ---- the options a pipeline keeps in extra_json ---- */

typedef struct {
  gboolean shuffle;          /* "shuffle": reshuffle the training set every epoch (default TRUE) */
  char *label_column;        /* "label_column": csv, a header name or 0-based index; NULL: last */
  gboolean regression;       /* "regression": csv, real-valued labels */
  int image_width, image_height; /* "image_width", "image_height": folder, resize to (0: first image's) */
  /* the text and series kinds' options (NlDatasetOptions; 0 / NULL: its default) */
  char *text_column;         /* "text_column": text, the text's column */
  NlTokenizerKind tokenizer; /* "tokenizer": "word" or "char" */
  int vocab_size, min_count, max_length; /* "vocab_size", "min_count", "max_length" */
  char *target_column;       /* "target": series, the predicted column */
  int window, horizon;       /* "window", "horizon": series */
} NlPipelineExtra;

/* The dataset options of X (its strings borrowed) with val_fraction. */
void nl_pipeline_extra_to_options (const NlPipelineExtra *x, double val_fraction, NlDatasetOptions *opts);

/* Reads JSON (NULL or "": the defaults). FALSE with an error when it is not
 * a JSON object or a member has the wrong type; *x is then the defaults. */
gboolean nl_pipeline_extra_parse (const char *json, NlPipelineExtra *x, GError **error);
/* X as a JSON object, keeping every other member of BASE_JSON (may be NULL). */
char *nl_pipeline_extra_to_json (const NlPipelineExtra *x, const char *base_json);
void nl_pipeline_extra_clear (NlPipelineExtra *x);

/* ---- the preview ---- */

typedef struct NlDataSource NlDataSource;

#define NL_TEXT_PREVIEW_TOP 20  /* most frequent tokens listed */
#define NL_TEXT_PREVIEW_BINS 32 /* length histogram bins */

typedef struct {
  char *token;
  int64_t count;
} NlTokenCount;

/* One previewed sample of a text kind: its tokens as read, each marked
 * when the vocabulary does not know it (it is <unk> in the sample). */
typedef struct {
  int n_tokens;              /* shown: at most max_length */
  int64_t n_total;           /* before truncation to max_length */
  char **tokens;             /* n_tokens, NULL-terminated */
  gboolean *unknown;         /* n_tokens */
} NlTextSamplePreview;

/* What the Data page shows of a text or text-lm dataset (training side). */
typedef struct {
  gboolean language_model;   /* text-lm (labels are the next tokens), else classification */
  NlTokenizerKind tokenizer;
  int vocab_size;            /* entries, <pad> and <unk> included */
  int max_length;            /* the truncation point, in tokens */
  int64_t n_truncated;       /* samples with more than max_length tokens (cut) */
  int64_t n_truncated_rows;  /* rows over 1 MB, cut at 1 MB */
  int64_t n_skipped_rows;    /* rows without a token, left out */
  int64_t n_tokens;          /* tokens of every training sample, before truncation */
  int64_t n_unknown;         /* of those, how many the vocabulary does not know */
  /* length histogram: bins[k] counts samples of bin_width*k .. bin_width*(k+1)-1
   * tokens (the last bin: that many or more); max_length falls in bin
   * max_length / bin_width */
  int n_bins;
  int64_t bin_width;
  int64_t *bins;
  int64_t longest;           /* tokens of the longest sample */
  int n_top;                 /* <= NL_TEXT_PREVIEW_TOP */
  NlTokenCount *top;         /* most frequent tokens of the training texts, <pad>/<unk> left out */
  int64_t unk_count;         /* tokens the vocabulary dropped (they read as <unk>) */
  int n_samples;             /* NlDataPreview.n_samples */
  NlTextSamplePreview *samples; /* one per preview sample, in the order of NlDataPreview.indices */
} NlTextPreview;

#define NL_SERIES_PREVIEW_POINTS 2000 /* at most this many values drawn */

/* What the Data page shows of a series dataset. */
typedef struct {
  char *target;              /* the target column's name */
  int n_values;              /* <= NL_SERIES_PREVIEW_POINTS */
  float *values;             /* the target's raw values at rows 0, stride, 2*stride, ... */
  int64_t stride;            /* rows per value (1 for files of up to 2000 rows) */
  int64_t n_rows;            /* rows of the file */
  int64_t val_start_row;     /* where only validation labels begin (n_rows: no validation) */
  int window, horizon;       /* rows per sample, values per label */
  int n_columns;             /* numeric columns, the features */
  char **columns;            /* their names, NULL-terminated */
  float target_mean, target_std; /* the z-score of the target (training rows) */
} NlSeriesPreview;

typedef struct {
  char *spec;                /* the dataset spec opened */
  char *description;         /* the reader's, e.g. "Fashion-MNIST train (60000 images) from DIR" */
  gboolean has_test_set;     /* the kind has test files of its own (else a validation split) */
  int64_t length;            /* samples on the training side */
  NlShape sample_shape;      /* as stored, e.g. (1, 28, 28) */
  NlShape shape;             /* after the transforms: the shape of each preview sample */
  int n_classes;             /* 0 for regression */
  char **class_names;        /* n_classes names (the dataset's, else "0", "1", ...); NULL for regression */
  int64_t *class_counts;     /* n_classes counts over the training side; NULL for regression */
  char *transforms;          /* the canonical transform spec ("identity" when none) */
  int n_samples;
  int64_t *indices;          /* dataset index of each sample */
  float *labels;             /* each sample's label (class index as a float) */
  float *samples;            /* n_samples x numel (shape), rescaled into [0, 1] for display (below) */
  float value_min, value_max;/* the range of the transformed values before that rescale */
  double seconds;            /* how long the load took (the dataset's opening included when it was opened) */
  NlTextPreview *text;       /* text / text-lm kinds, else NULL */
  NlSeriesPreview *series;   /* series kind, else NULL */
  /* private */
  gint ref_count;
  NlDataSource *source;
} NlDataPreview;

/* Opens PL's dataset (its training side, with the validation fraction
 * pl->split where the kind uses it and the options of pl->extra_json) and
 * returns n_samples (fewer when the dataset is smaller) samples chosen by
 * SEED, each passed through pl->transforms with that seed (epoch 0, the
 * sample's dataset index), plus the class histogram over the whole
 * training side. Samples are rescaled for display: clamped to [0, 1], or,
 * when the transforms normalise or the samples are not images (1-d),
 * mapped linearly from [value_min, value_max]. With PREVIOUS (may be NULL)
 * of the same dataset and options, its open dataset and histogram are
 * reused, so a transform edit costs only the samples. Checks CANCELLABLE
 * between samples and while counting. Errors: the dataset's (naming the
 * file), a bad transform spec, or transforms that do not fit the sample
 * shape (NL_DATA_ERROR_SPEC); G_IO_ERROR_CANCELLED when cancelled. */
NlDataPreview *nl_data_preview_load (const NlPipelineInfo *pl, int n_samples, guint64 seed,
                                     NlDataPreview *previous, GCancellable *cancellable, GError **error);
NlDataPreview *nl_data_preview_ref (NlDataPreview *p);
void nl_data_preview_unref (NlDataPreview *p);
/* Sample i's label as text: the class name, or the value for regression. */
char *nl_data_preview_label_text (const NlDataPreview *p, int i);
/* Pointer to sample i's display values (numel of p->shape floats). */
const float *nl_data_preview_sample (const NlDataPreview *p, int i);

/* "60,000": a count with thousands separators. */
char *nl_data_format_count (int64_t n);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlTransformStep, nl_transform_step_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlDataPreview, nl_data_preview_unref)

G_END_DECLS
