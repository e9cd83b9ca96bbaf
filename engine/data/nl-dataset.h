/* nl-dataset.h — the dataset interface: random access to (sample, label)
 * pairs, opening a dataset spec, and the readers: MNIST / Fashion-MNIST
 * IDX, CIFAR-10 binary, CSV and image folders (packed record files are in
 * nl-packed-dataset.h; the kinds of spec in nl-dataset-kind.h).
 *
 * A dataset is immutable once opened, so `get` may be called from several
 * threads at once. Batching, shuffling and normalisation live in
 * nl-batcher.h. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "core/nl-tensor.h"
#include "engine/data/nl-tokenizer.h"
#include "engine/data/nl-vocab.h"

G_BEGIN_DECLS

#define NL_DATA_ERROR (nl_data_error_quark ())
GQuark nl_data_error_quark (void);

typedef enum {
  NL_DATA_ERROR_NOT_FOUND, /* a file is missing or unreadable */
  NL_DATA_ERROR_CORRUPT,   /* bad magic, truncated, bad gzip, label out of range */
  NL_DATA_ERROR_MISMATCH,  /* image/label counts differ; wrong tensor for a batch */
  NL_DATA_ERROR_SPEC,      /* unknown dataset kind or malformed spec */
} NlDataErrorCode;

typedef struct NlDataset NlDataset;

typedef struct {
  const char *type_name;
  /* Sample i as float32 (images scaled to [0, 1], not normalised) into
   * `sample` (numel of sample_shape floats), label into *label (class index
   * as float). Must be safe to call from several threads at once. */
  gboolean (*get) (NlDataset *ds, int64_t i, float *sample, float *label, GError **error);
  /* Optional fast path for raw uint8 images: pointer to sample i's bytes
   * (numel of sample_shape, 0..255 meaning 0..1), or NULL. */
  const guint8 *(*get_u8) (NlDataset *ds, int64_t i, float *label);
  /* Release the subclass's own data and the struct itself. class_names and
   * description are freed by nl_dataset_free after this returns. */
  void (*free) (NlDataset *ds);
  /* Optional, for uint8 datasets whose samples are not resident (image
   * folders, packed files): copy sample i's bytes (numel of sample_shape,
   * 0..255 meaning 0..1) into `sample`. Thread-safe like get. When set,
   * get returns exactly these bytes / 255. */
  gboolean (*read_u8) (NlDataset *ds, int64_t i, guint8 *sample, float *label, GError **error);
} NlDatasetClass;

struct NlDataset {
  const NlDatasetClass *klass;
  int64_t length;
  NlShape sample_shape; /* e.g. (1, 28, 28) */
  NlShape label_shape;  /* one sample's label: ndim 0 (zeroed, the default) is one value; a
                           language model's (T) next tokens, a series' (H) future values. get()
                           writes numel(label_shape) floats (1 for ndim 0) to label */
  int n_classes;        /* 0 for regression */
  char **class_names;   /* NULL-terminated or NULL */
  char *description;    /* "Fashion-MNIST train (60000 images) from DIR" */
  NlVocab *vocab;       /* text kinds: the vocabulary its ids are of (owned, a reference); else NULL */
  int64_t n_truncated_rows; /* text kinds: rows (lines) over 1 MB, cut at 1 MB on a character boundary */
  int64_t n_skipped_rows;   /* text: rows whose text holds no token, left out (never all of them) */
};

/* Options for nl_dataset_open_full; all-zero (or NULL) means the defaults. */
typedef struct {
  const char *label_column; /* CSV: header name or 0-based index; NULL = last column */
  int image_width, image_height; /* folder: resize to; 0 = that size of the first image */
  gboolean regression;      /* CSV: the label is a real value, n_classes 0 */
  double val_fraction;      /* csv/folder/text/series: 0..1 of the samples held out for validation */
  /* text, text-lm (nl-text-dataset.h) */
  const char *text_column;  /* text: the text's header name; NULL = "text" (the label: label_column, NULL = "label") */
  NlTokenizerKind tokenizer; /* word (the default) or char */
  int vocab_size;           /* at most this many ids, <pad> and <unk> included; 0 = 20000 */
  int min_count;            /* a token seen fewer times in the training texts is <unk>; 0 = 1 */
  int max_length;           /* tokens per sample (padded with 0 / cut); 0 = 128 */
  const NlVocab *vocab;     /* borrowed: NULL = build from the training side (train only); the
                               validation side, evaluate and predict pass the training side's */
  /* series (nl-series-dataset.h) */
  const char *target_column; /* the predicted column's header name; NULL = the last numeric column */
  int window;               /* rows per sample; 0 = 32 */
  int horizon;              /* future target values per label; 0 = 1 */
} NlDatasetOptions;

/* Open a dataset from a spec "KIND[:PATH]": KIND is a row of the kind
 * table (nl-dataset-kind.h: "fashion-mnist", "csv", ...; any case), PATH
 * everything after the first ':' (else the kind's default path). For the
 * kinds that use the split (NL_DATASET_USES_SPLIT), `train` picks a side
 * of the deterministic split set by opts->val_fraction (see
 * nl_dataset_split); the others have their own test files, or ignore
 * `train` (packed files: pack each side to its own file). Options a kind
 * does not use are ignored. Unknown kinds, a missing path and a
 * val_fraction outside [0, 1] are NL_DATA_ERROR_SPEC errors; unknown kinds
 * list the known ones. opts may be NULL. */
NlDataset *nl_dataset_open_full (const char *spec, gboolean train, const NlDatasetOptions *opts,
                                 GError **error);

/* nl_dataset_open_full with default options. */
NlDataset *nl_dataset_open (const char *spec, gboolean train, GError **error);

/* CIFAR-10 binary version from DIR (or DIR/cifar-10-batches-bin when DIR
 * itself has no batch files): train reads data_batch_1.bin .. data_batch_5.bin
 * (all five must exist), test reads test_batch.bin. Each record is 1 label
 * byte (< 10) and 3072 bytes of 32x32 R, G, B planes: sample_shape (3, 32, 32),
 * uint8 (get_u8), class names airplane .. truck. */
NlDataset *nl_cifar_dataset_open (const char *dir, gboolean train, GError **error);

/* A CSV file of numbers, one sample per line, comma-separated (a first line
 * without commas but with tabs or semicolons switches to those). The first
 * line is a header when any of its cells is not a number. Fields may be
 * double-quoted; blank lines are skipped. The label column is
 * opts->label_column (a header name, else a 0-based index; default the
 * last column); the others are the features, sample_shape (n_features).
 * Classification labels must be integers >= 0, n_classes = max + 1 over
 * the whole file, class_names NULL; with opts->regression the label is any
 * finite real and n_classes 0. Errors name the line (1-based) and the
 * column (0-based, like label_column):
 *   "FILE:17: column 3 ('petal_width') is not a number: 'abc'"
 *   "FILE:9: 4 columns, expected 5" */
NlDataset *nl_csv_dataset_open (const char *path, gboolean train, const NlDatasetOptions *opts,
                                GError **error);

/* DIR/CLASS/IMAGE: each subfolder of DIR (sorted by byte value, hidden ones
 * skipped) is a class, its name the class name, even when it holds no
 * images. Its files named *.png, *.jpg or *.jpeg (any case) are the samples,
 * in sorted order; other files and deeper folders are skipped. Images are
 * decoded by content (libpng / libjpeg), always to RGB — grayscale ones
 * too, and alpha is dropped — so sample_shape is (3, H, W), H and W from
 * opts or, where 0, from the first image of the whole folder; other sizes
 * are resized bilinearly (pixel centres aligned) and rounded to uint8.
 * Decoding happens in get() / read_u8() (thread-safe), so memory stays at
 * one path per sample; a corrupt or missing image is an error from get()
 * naming the file (from open when it is the first image and sets the
 * size). A PNG that lacks only its IEND trailer still decodes. */
NlDataset *nl_folder_dataset_open (const char *dir, gboolean train, const NlDatasetOptions *opts,
                                   GError **error);
/* The labels of nl_folder_dataset_open (dir, TRUE, val_fraction)'s samples
 * counted from the listing alone (no image decoded) into counts[n_classes]
 * (zeroed); FALSE when the folder no longer has n_classes classes and
 * `length` samples on that side. */
gboolean nl_folder_dataset_count_labels (const char *dir, double val_fraction, int n_classes, int64_t length,
                                         int64_t *counts);

/* The deterministic train / validation split of n samples used by csv and
 * folder: with val_fraction v > 0 the validation side is a fixed-seed
 * shuffled subset of round(v * n) samples and train the rest; with v == 0
 * both sides are all n. Returns the chosen side's indices in ascending
 * order (g_free) and their count in *n_out; NULL with an
 * NL_DATA_ERROR_SPEC error naming `what` when v is outside [0, 1] or the
 * side would be empty. */
int64_t *nl_dataset_split (int64_t n, double val_fraction, gboolean train, const char *what,
                           int64_t *n_out, GError **error);

/* Open a pair of IDX files directly (images idx3 uint8, labels idx1 uint8).
 * PATH.gz is preferred when it exists; a path ending in .gz is read through
 * zlib. n_classes is max label + 1; class_names is NULL. */
NlDataset *nl_idx_dataset_open (const char *images_path, const char *labels_path, GError **error);

/* As nl_idx_dataset_open, but every label must be < n_classes (n_classes > 0;
 * 0 infers it as above). class_names (NULL or n_classes strings) is copied. */
NlDataset *nl_idx_dataset_open_full (const char *images_path, const char *labels_path,
                                     int n_classes, const char *const *class_names,
                                     GError **error);

void nl_dataset_free (NlDataset *ds);

/* Convenience: ds->klass->get with a bounds check. label holds
 * nl_dataset_label_numel (ds) floats. */
gboolean nl_dataset_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error);
/* The floats of one sample's label: numel (label_shape), 1 for ndim 0. */
int64_t nl_dataset_label_numel (const NlDataset *ds);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlDataset, nl_dataset_free)

G_END_DECLS
