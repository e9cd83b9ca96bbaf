/* nl-dataset.c — opening a dataset spec ("fashion-mnist:DIR",
 * "csv:FILE") by its kind (nl-dataset-kind.h, which lists the readers),
 * and the generic parts of the dataset interface. */
#include "engine/data/nl-dataset.h"
#include "engine/data/nl-dataset-kind.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK (nl-data-error-quark, nl_data_error)

NlDataset *
nl_dataset_open (const char *spec, gboolean train, GError **error)
{
  return nl_dataset_open_full (spec, train, NULL, error);
}

NlDataset *
nl_dataset_open_full (const char *spec, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  static const NlDatasetOptions defaults = { 0 };
  g_autofree char *path = NULL;
  const NlDatasetKind *kind;

  if (!opts)
    opts = &defaults;
  if (!spec || !*spec)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                   "empty dataset spec (expected e.g. \"fashion-mnist\" or \"mnist:DIR\")");
      return NULL;
    }

  if (!(kind = nl_dataset_kind_lookup (spec, &path)))
    {
      const char *colon = strchr (spec, ':');
      g_autofree char *kind_name = colon ? g_strndup (spec, colon - spec) : g_strdup (spec);
      g_autofree char *known = nl_dataset_kind_list (0, FALSE, ", ");
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                   "unknown dataset kind '%s' in spec '%s' (known: %s)", kind_name, spec, known);
      return NULL;
    }

  const char *dir = path ? path : kind->default_path;
  if (!dir)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC, "dataset spec '%s' needs a path: %s:%s",
                   spec, kind->name, kind->path_is_folder ? "DIR" : "FILE");
      return NULL;
    }
  if (!(opts->val_fraction >= 0.0 && opts->val_fraction <= 1.0))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                   "validation fraction %g is outside [0, 1]", opts->val_fraction);
      return NULL;
    }
  return kind->open (kind, dir, train, opts, error);
}

void
nl_dataset_free (NlDataset *ds)
{
  if (!ds)
    return;
  char **names = ds->class_names;
  char *desc = ds->description;
  NlVocab *vocab = ds->vocab;
  if (ds->klass && ds->klass->free)
    ds->klass->free (ds);
  g_strfreev (names);
  g_free (desc);
  if (vocab)
    nl_vocab_unref (vocab);
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

int64_t
nl_dataset_label_numel (const NlDataset *ds)
{
  return ds->label_shape.ndim > 0 ? nl_shape_numel (&ds->label_shape) : 1;
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
