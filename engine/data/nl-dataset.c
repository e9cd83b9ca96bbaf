/* nl-dataset.c — dataset specs ("fashion-mnist:DIR", "csv:FILE") and the
 * generic parts of the dataset interface. The readers are in
 * nl-idx-dataset.c, nl-cifar-dataset.c, nl-csv-dataset.c,
 * nl-folder-dataset.c and nl-packed-dataset.c. */
#include "engine/data/nl-dataset.h"
#include "engine/data/nl-packed-dataset.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK (nl-data-error-quark, nl_data_error)

typedef enum { KIND_IDX, KIND_CIFAR, KIND_CSV, KIND_FOLDER, KIND_PACKED } KindType;

typedef struct {
  const char *kind;
  KindType type;
  const char *title;
  const char *default_dir; /* NULL: the spec must give a path */
  const char *const *class_names;
} NlDatasetKind;

static const char *const fashion_names[] = {
  "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
  "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot", NULL,
};

static const char *const digit_names[] = {
  "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", NULL,
};

static const NlDatasetKind kinds[] = {
  { "fashion-mnist", KIND_IDX, "Fashion-MNIST", "/usr/share/datasets/fashion-mnist", fashion_names },
  { "mnist", KIND_IDX, "MNIST", "/usr/share/datasets/mnist", digit_names },
  { "cifar10", KIND_CIFAR, "CIFAR-10", NULL, NULL },
  { "csv", KIND_CSV, "CSV", NULL, NULL },
  { "folder", KIND_FOLDER, "image folder", NULL, NULL },
  { "packed", KIND_PACKED, "packed records", NULL, NULL },
};

NlDataset *
nl_dataset_open (const char *spec, gboolean train, GError **error)
{
  return nl_dataset_open_full (spec, train, NULL, error);
}

/* A packed file from before checksums reads, with a note (once per file
 * and process: a run opens it for each split) that damage inside its
 * records goes unnoticed. */
static NlDataset *
packed_open (const char *path, GError **error)
{
  static GMutex lock;
  static GHashTable *noted;
  NlDataset *ds = nl_packed_dataset_open (path, error);
  if (ds && nl_packed_dataset_version (ds) < 2)
    {
      g_mutex_lock (&lock);
      if (!noted)
        noted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      if (g_hash_table_add (noted, g_strdup (path)))
        g_printerr ("note: %s is a packed file of format version 1: its records carry no checksum, so damage "
                    "inside one goes unnoticed (pack it again to add them)\n", path);
      g_mutex_unlock (&lock);
    }
  return ds;
}

NlDataset *
nl_dataset_open_full (const char *spec, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  static const NlDatasetOptions defaults = { 0 };
  if (!opts)
    opts = &defaults;
  if (!spec || !*spec)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                   "empty dataset spec (expected e.g. \"fashion-mnist\" or \"mnist:DIR\")");
      return NULL;
    }

  const char *colon = strchr (spec, ':');
  g_autofree char *kind_name = colon ? g_strndup (spec, colon - spec) : g_strdup (spec);
  const NlDatasetKind *kind = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS (kinds); i++)
    if (g_ascii_strcasecmp (kind_name, kinds[i].kind) == 0)
      kind = &kinds[i];
  if (!kind)
    {
      g_autoptr (GString) known = g_string_new (NULL);
      for (size_t i = 0; i < G_N_ELEMENTS (kinds); i++)
        g_string_append_printf (known, "%s%s", i ? ", " : "", kinds[i].kind);
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                   "unknown dataset kind '%s' in spec '%s' (known: %s)", kind_name, spec, known->str);
      return NULL;
    }

  const char *dir = colon && colon[1] ? colon + 1 : kind->default_dir;
  if (!dir)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC, "dataset spec '%s' needs a path: %s:%s",
                   spec, kind->kind, kind->type == KIND_CSV || kind->type == KIND_PACKED ? "FILE" : "DIR");
      return NULL;
    }
  if (!(opts->val_fraction >= 0.0 && opts->val_fraction <= 1.0))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                   "validation fraction %g is outside [0, 1]", opts->val_fraction);
      return NULL;
    }
  switch (kind->type)
    {
    case KIND_CIFAR:
      return nl_cifar_dataset_open (dir, train, error);
    case KIND_CSV:
      return nl_csv_dataset_open (dir, train, opts, error);
    case KIND_FOLDER:
      return nl_folder_dataset_open (dir, train, opts, error);
    case KIND_PACKED:
      return packed_open (dir, error);
    case KIND_IDX:
      break;
    }

  const char *prefix = train ? "train" : "t10k";
  g_autofree char *images_name = g_strdup_printf ("%s-images-idx3-ubyte", prefix);
  g_autofree char *labels_name = g_strdup_printf ("%s-labels-idx1-ubyte", prefix);
  g_autofree char *images = g_build_filename (dir, images_name, NULL);
  g_autofree char *labels = g_build_filename (dir, labels_name, NULL);

  NlDataset *ds = nl_idx_dataset_open_full (images, labels, 10, kind->class_names, error);
  if (!ds)
    return NULL;
  g_free (ds->description);
  ds->description = g_strdup_printf ("%s %s (%" G_GINT64_FORMAT " images) from %s",
                                     kind->title, train ? "train" : "test", ds->length, dir);
  return ds;
}

void
nl_dataset_free (NlDataset *ds)
{
  if (!ds)
    return;
  char **names = ds->class_names;
  char *desc = ds->description;
  if (ds->klass && ds->klass->free)
    ds->klass->free (ds);
  g_strfreev (names);
  g_free (desc);
}

gboolean
nl_dataset_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error)
{
  if (i < 0 || i >= ds->length)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "sample index %" G_GINT64_FORMAT " is out of range for a dataset of %" G_GINT64_FORMAT,
                   i, ds->length);
      return FALSE;
    }
  return ds->klass->get (ds, i, sample, label, error);
}

/* splitmix64: a fixed, tiny generator, so a split never changes with the
 * GLib version or the platform. */
static guint64
split_next (guint64 *state)
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

int64_t *
nl_dataset_split (int64_t n, double val_fraction, gboolean train, const char *what, int64_t *n_out,
                  GError **error)
{
  g_return_val_if_fail (n >= 0 && n_out, NULL);
  *n_out = 0;
  if (!(val_fraction >= 0.0 && val_fraction <= 1.0))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                   "%s: validation fraction %g is outside [0, 1]", what, val_fraction);
      return NULL;
    }
  int64_t n_val = val_fraction > 0.0 ? (int64_t) llround (val_fraction * (double) n) : 0;
  int64_t want = val_fraction == 0.0 ? n : train ? n - n_val : n_val;
  if (want == 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                   "%s: a validation fraction of %g of %" G_GINT64_FORMAT " samples leaves the %s side empty",
                   what, val_fraction, n, train ? "training" : "validation");
      return NULL;
    }

  int64_t *idx = g_new (int64_t, MAX (n, 1));
  for (int64_t i = 0; i < n; i++)
    idx[i] = i;
  if (val_fraction > 0.0)
    {
      /* The last n_val of a seeded Fisher-Yates permutation are the
       * validation side; the seed is fixed so that both sides, opened
       * separately, agree. */
      guint64 state = G_GUINT64_CONSTANT (0x6e65746c6f6f6d31); /* "netloom1" */
      for (int64_t i = n - 1; i > 0; i--)
        {
          int64_t j = (int64_t) (split_next (&state) % (guint64) (i + 1));
          int64_t t = idx[i];
          idx[i] = idx[j];
          idx[j] = t;
        }
      /* Mark the validation samples, then list the chosen side in order. */
      guint8 *is_val = g_new0 (guint8, n);
      for (int64_t k = n - n_val; k < n; k++)
        is_val[idx[k]] = 1;
      int64_t m = 0;
      for (int64_t i = 0; i < n; i++)
        if (is_val[i] == !train)
          idx[m++] = i;
      g_free (is_val);
    }
  *n_out = want;
  return idx;
}
