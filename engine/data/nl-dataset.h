/* nl-dataset.h — the dataset interface: random access to (sample, label)
 * pairs, plus the MNIST / Fashion-MNIST IDX reader.
 *
 * A dataset is immutable once opened, so `get` may be called from several
 * threads at once. Batching, shuffling and normalisation live in
 * nl-batcher.h. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "engine/nl-tensor.h"

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
} NlDatasetClass;

struct NlDataset {
  const NlDatasetClass *klass;
  int64_t length;
  NlShape sample_shape; /* e.g. (1, 28, 28) */
  int n_classes;        /* 0 for regression */
  char **class_names;   /* NULL-terminated or NULL */
  char *description;    /* "Fashion-MNIST train (60000 images) from DIR" */
};

/* Spec: "fashion-mnist[:DIR]" (default DIR /usr/share/datasets/fashion-mnist)
 * or "mnist[:DIR]" (default DIR /usr/share/datasets/mnist).
 * train: TRUE reads train-images-idx3-ubyte / train-labels-idx1-ubyte,
 * FALSE reads t10k-images-idx3-ubyte / t10k-labels-idx1-ubyte.
 * Each file is read as NAME.gz (gzip) if present, else NAME raw.
 * Unknown dataset kinds are an NL_DATA_ERROR_SPEC error listing the known
 * ones. Labels must be < 10. */
NlDataset *nl_dataset_open (const char *spec, gboolean train, GError **error);

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

/* Convenience: ds->klass->get with a bounds check. */
gboolean nl_dataset_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlDataset, nl_dataset_free)

G_END_DECLS
