/* nl-dataset-kind.c — the table of dataset kinds (nl-dataset-kind.h) and
 * the few lines that fit each reader to the table's open function. */
#include "engine/data/nl-dataset-kind.h"
#include "engine/data/nl-packed-dataset.h"
#include "engine/data/nl-series-dataset.h"
#include "engine/data/nl-text-dataset.h"

#include <glib/gi18n.h>
#include <string.h>

/* ---- the readers, as the table calls them ---- */

/* MNIST-format IDX files in DIR: train-* or t10k-* (nl-idx-dataset.c
 * reads NAME.gz when present); labels below 10, the kind's class names. */
static NlDataset *
idx_open (const NlDatasetKind *kind, const char *dir, gboolean train, const NlDatasetOptions *opts, GError **error)
{
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

static NlDataset *
cifar_open (const NlDatasetKind *kind, const char *dir, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  return nl_cifar_dataset_open (dir, train, error);
}

static NlDataset *
csv_open (const NlDatasetKind *kind, const char *path, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  return nl_csv_dataset_open (path, train, opts, error);
}

static NlDataset *
folder_open (const NlDatasetKind *kind, const char *dir, gboolean train, const NlDatasetOptions *opts,
             GError **error)
{
  return nl_folder_dataset_open (dir, train, opts, error);
}

static NlDataset *
text_open (const NlDatasetKind *kind, const char *path, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  return nl_text_dataset_open (path, train, opts, error);
}

static NlDataset *
text_lm_open (const NlDatasetKind *kind, const char *path, gboolean train, const NlDatasetOptions *opts,
              GError **error)
{
  return nl_text_lm_dataset_open (path, train, opts, error);
}

static NlDataset *
series_open (const NlDatasetKind *kind, const char *path, gboolean train, const NlDatasetOptions *opts,
             GError **error)
{
  return nl_series_dataset_open (path, train, opts, error);
}

/* A packed file from before checksums reads, with a note (once per file
 * and process: a run opens it for each split) that damage inside its
 * records goes unnoticed. Packed files ignore `train`: each side is packed
 * to its own file. */
static NlDataset *
packed_open (const NlDatasetKind *kind, const char *path, gboolean train, const NlDatasetOptions *opts,
             GError **error)
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

/* ---- the table ---- */

static const char *const fashion_names[] = {
  "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
  "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot", NULL,
};

static const char *const digit_names[] = {
  "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", NULL,
};

static const char *const csv_patterns[] = { "*.csv", "*.tsv", "*.txt", NULL };
static const char *const table_patterns[] = { "*.csv", "*.tsv", NULL };
static const char *const txt_patterns[] = { "*.txt", NULL };

/* The normalisation defaults are the usual per-dataset mean and std of the
 * pixels in [0, 1]; kinds of arbitrary data start from none (0, 1), and
 * so do token ids (which must reach the Embedding as they are) and series
 * (z-scored by their reader). */
static const NlDatasetKind kinds[] = {
  { .name = "fashion-mnist", .title = N_("Fashion-MNIST"), .default_path = "/usr/share/datasets/fashion-mnist",
    .path_is_folder = TRUE, .mean = 0.13f, .std = 0.31f, .class_names = fashion_names, .open = idx_open },
  { .name = "mnist", .title = N_("MNIST"), .default_path = "/usr/share/datasets/mnist",
    .path_is_folder = TRUE, .mean = 0.13f, .std = 0.31f, .class_names = digit_names, .open = idx_open },
  { .name = "cifar10", .title = N_("CIFAR-10 folder"), .path_is_folder = TRUE, .mean = 0.47f, .std = 0.25f,
    .open = cifar_open },
  { .name = "csv", .title = N_("CSV file"), .uses = NL_DATASET_USES_SPLIT | NL_DATASET_USES_LABEL_COLUMN,
    .mean = 0.0f, .std = 1.0f, .filter_name = N_("CSV files"), .filter_patterns = csv_patterns, .open = csv_open },
  { .name = "folder", .title = N_("Image folder"), .path_is_folder = TRUE,
    .uses = NL_DATASET_USES_SPLIT | NL_DATASET_USES_IMAGE_SIZE, .mean = 0.0f, .std = 1.0f, .open = folder_open,
    .count_labels = nl_folder_dataset_count_labels },
  { .name = "packed", .title = N_("Packed file"), .mean = 0.0f, .std = 1.0f, .open = packed_open },
  { .name = "text", .title = N_("Text table"),
    .uses = NL_DATASET_USES_SPLIT | NL_DATASET_USES_TEXT | NL_DATASET_USES_TEXT_COLUMN, .mean = 0.0f, .std = 1.0f,
    .filter_name = N_("CSV and TSV files"), .filter_patterns = table_patterns, .open = text_open },
  { .name = "text-lm", .title = N_("Text file (language model)"), .uses = NL_DATASET_USES_SPLIT | NL_DATASET_USES_TEXT,
    .mean = 0.0f, .std = 1.0f, .filter_name = N_("Text files"), .filter_patterns = txt_patterns, .open = text_lm_open },
  { .name = "series", .title = N_("Time series"), .uses = NL_DATASET_USES_SPLIT | NL_DATASET_USES_SERIES,
    .mean = 0.0f, .std = 1.0f, .filter_name = N_("CSV files"), .filter_patterns = table_patterns,
    .open = series_open },
};

const NlDatasetKind *
nl_dataset_kinds (int *n)
{
  if (n)
    *n = G_N_ELEMENTS (kinds);
  return kinds;
}

const NlDatasetKind *
nl_dataset_kind_lookup (const char *spec, char **path)
{
  const char *colon;
  gsize len;

  if (path)
    *path = NULL;
  if (!spec)
    return NULL;
  colon = strchr (spec, ':');
  len = colon ? (gsize) (colon - spec) : strlen (spec);
  for (gsize i = 0; i < G_N_ELEMENTS (kinds); i++)
    if (strlen (kinds[i].name) == len && g_ascii_strncasecmp (spec, kinds[i].name, len) == 0)
      {
        if (path && colon && colon[1])
          *path = g_strdup (colon + 1);
        return &kinds[i];
      }
  return NULL;
}

int
nl_dataset_kind_index (const NlDatasetKind *kind)
{
  return kind ? (int) (kind - kinds) : -1;
}

char *
nl_dataset_kind_spec (const NlDatasetKind *kind, const char *path)
{
  g_return_val_if_fail (kind != NULL, NULL);
  if (!path || !*path)
    return g_strdup (kind->name);
  return g_strconcat (kind->name, ":", path, NULL);
}

char *
nl_dataset_kind_list (NlDatasetKindUses uses, gboolean with_path, const char *last_sep)
{
  GString *s = g_string_new (NULL);
  guint n = 0, total = 0;

  for (gsize i = 0; i < G_N_ELEMENTS (kinds); i++)
    total += (kinds[i].uses & uses) == uses;
  for (gsize i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      const NlDatasetKind *k = &kinds[i];
      const char *what = k->path_is_folder ? "DIR" : "FILE";
      if ((k->uses & uses) != uses)
        continue;
      if (n++)
        g_string_append (s, n == total ? last_sep : ", ");
      g_string_append (s, k->name);
      if (with_path)
        g_string_append_printf (s, k->default_path ? "[:%s]" : ":%s", what);
    }
  return g_string_free (s, FALSE);
}
