/* nl-dataset.c — dataset specs ("fashion-mnist:DIR") and the generic parts
 * of the dataset interface. The IDX reader is in nl-idx-dataset.c. */
#include "engine/data/nl-dataset.h"

#include <string.h>

G_DEFINE_QUARK (nl-data-error-quark, nl_data_error)

typedef struct {
  const char *kind;
  const char *title;
  const char *default_dir;
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
  { "fashion-mnist", "Fashion-MNIST", "/usr/share/datasets/fashion-mnist", fashion_names },
  { "mnist", "MNIST", "/usr/share/datasets/mnist", digit_names },
};

NlDataset *
nl_dataset_open (const char *spec, gboolean train, GError **error)
{
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
