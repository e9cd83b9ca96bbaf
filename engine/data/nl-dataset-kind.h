/* nl-dataset-kind.h — the kinds of dataset spec ("fashion-mnist",
 * "csv:FILE", ...): one table that everything reading a spec asks —
 * nl_dataset_open_full, the run settings' normalisation defaults, the
 * CLI's help, the Data page's source list and its preview. A new kind is
 * its reader and one row in nl-dataset-kind.c; tests/test-dataset-kinds.c
 * fails until the row has its parts.
 *
 * The table is static and never changes: safe from any thread. */
#pragma once

#include "engine/data/nl-dataset.h"

G_BEGIN_DECLS

/* Which options of a spec (NlDatasetOptions) a kind reads. */
typedef enum {
  NL_DATASET_USES_SPLIT = 1 << 0,        /* no test set of its own: val_fraction picks a side */
  NL_DATASET_USES_LABEL_COLUMN = 1 << 1, /* label_column and regression */
  NL_DATASET_USES_IMAGE_SIZE = 1 << 2,   /* image_width and image_height */
  NL_DATASET_USES_TEXT = 1 << 3,         /* tokenizer, vocab_size, min_count, max_length, vocab */
  NL_DATASET_USES_TEXT_COLUMN = 1 << 4,  /* text_column, and label_column as a name (class labels only) */
  NL_DATASET_USES_SERIES = 1 << 5,       /* target_column, window, horizon */
} NlDatasetKindUses;

typedef struct NlDatasetKind NlDatasetKind;

/* Opens the kind at PATH (never NULL, the spec's or the default path);
 * opts is never NULL and its val_fraction already checked to be in [0, 1]. */
typedef NlDataset *(*NlDatasetKindOpen) (const NlDatasetKind *kind, const char *path, gboolean train,
                                         const NlDatasetOptions *opts, GError **error);

/* Counts the training side's labels (as the dataset opened with this
 * val_fraction has them) into counts[n_classes] (zeroed) without reading a
 * sample; FALSE when PATH does not look as the open dataset of `length`
 * samples saw it, and the caller reads the samples instead. */
typedef gboolean (*NlDatasetKindCount) (const char *path, double val_fraction, int n_classes, int64_t length,
                                        int64_t *counts);

struct NlDatasetKind {
  const char *name;                   /* before a spec's ':' (any case): "fashion-mnist", "csv" */
  const char *title;                  /* menus; IDX descriptions: "Fashion-MNIST", "CSV file" */
  const char *default_path;           /* used when the spec gives none; NULL: it must give one */
  gboolean path_is_folder;            /* the path names a folder (DIR), else a file (FILE) */
  NlDatasetKindUses uses;
  float mean, std;                    /* the input normalisation a run starts from */
  const char *filter_name;            /* a file chooser's filter: "CSV files"; NULL: none */
  const char *const *filter_patterns; /* its patterns, NULL-terminated */
  const char *const *class_names;     /* for `open`: IDX's fixed names (NULL-terminated) */
  NlDatasetKindOpen open;
  NlDatasetKindCount count_labels;    /* optional: a fast path for the preview's histogram */
};

/* Every kind, in menu order (the first is a new pipeline's); *n (may be
 * NULL) receives the count. */
const NlDatasetKind *nl_dataset_kinds (int *n);

/* SPEC's kind: the part before the first ':' (the whole spec without
 * one), in any case; NULL when no kind has that name. *path (may be NULL)
 * receives a copy of the part after the ':', or NULL when it is empty or
 * missing. */
const NlDatasetKind *nl_dataset_kind_lookup (const char *spec, char **path);

/* The index of kind in nl_dataset_kinds, or -1 for NULL. */
int nl_dataset_kind_index (const NlDatasetKind *kind);

/* "name" or "name:PATH" (PATH NULL or ""). */
char *nl_dataset_kind_spec (const NlDatasetKind *kind, const char *path);

/* The names of the kinds that read every option of `uses` (0: every
 * kind), joined by ", " and last_sep before the last: "csv, folder";
 * with with_path each as it is written, "mnist[:DIR]", "csv:FILE". */
char *nl_dataset_kind_list (NlDatasetKindUses uses, gboolean with_path, const char *last_sep);

G_END_DECLS
