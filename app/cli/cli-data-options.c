/* cli-data-options.c — the dataset options of netloom-cli train, sweep and
 * fork, checked against the run settings' table. */
#include "cli-data-options.h"
#include "cli-common.h"
#include "engine/data/nl-dataset-kind.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void
nl_cli_data_options_init (NlCliDataOptions *d)
{
  memset (d, 0, sizeof *d);
  d->val_fraction = d->mean = d->std = NAN;
  d->vocab_size = d->min_count = d->max_length = d->window = d->horizon = -1;
  d->texts = g_ptr_array_new_with_free_func (g_free);
}

void
nl_cli_data_options_clear (NlCliDataOptions *d)
{
  g_clear_pointer (&d->dataset, g_free);
  g_clear_pointer (&d->label_column, g_free);
  g_clear_pointer (&d->image_size, g_free);
  g_clear_pointer (&d->val_dataset, g_free);
  g_clear_pointer (&d->text_column, g_free);
  g_clear_pointer (&d->tokenizer, g_free);
  g_clear_pointer (&d->target, g_free);
  g_clear_pointer (&d->texts, g_ptr_array_unref);
}

/* A help text kept as long as d. */
static const char *
text (NlCliDataOptions *d, char *s)
{
  g_ptr_array_add (d->texts, s);
  return s;
}

/* The kinds' names with every option of `uses`, as a help text's prefix:
 * "csv: ", "csv, folder: ". */
static char *
kinds_using (NlDatasetKindUses uses)
{
  g_autofree char *names = nl_dataset_kind_list (uses, FALSE, ", ");
  return g_strconcat (names, ": ", NULL);
}

/* "default 0.13 for fashion-mnist and mnist, 0.47 for cifar10, else 0":
 * the kinds' own normalisation (mean, or std), kinds of one value
 * together, and what a spec of no other kind gets. */
static char *
norm_note (gboolean want_std)
{
  int n;
  const NlDatasetKind *kinds = nl_dataset_kinds (&n);
  const float other = want_std ? 1.0f : 0.0f;
  GString *s = g_string_new ("default");
  int groups = 0;

  for (int i = 0; i < n; i++)
    {
      float v = want_std ? kinds[i].std : kinds[i].mean;
      g_autoptr (GPtrArray) names = g_ptr_array_new ();
      gboolean seen = v == other;
      for (int j = 0; j < i && !seen; j++)
        seen = (want_std ? kinds[j].std : kinds[j].mean) == v;
      if (seen)
        continue;
      for (int j = i; j < n; j++)
        if ((want_std ? kinds[j].std : kinds[j].mean) == v)
          g_ptr_array_add (names, (char *) kinds[j].name);
      g_string_append_printf (s, "%s %g for ", groups++ ? "," : "", v);
      for (guint k = 0; k < names->len; k++)
        g_string_append_printf (s, "%s%s", k == 0 ? "" : k + 1 == names->len ? " and " : ", ",
                                (char *) names->pdata[k]);
    }
  g_string_append_printf (s, ", else %g", other);
  return g_string_free (s, FALSE);
}

char *
nl_cli_dataset_synopsis (void)
{
  return nl_dataset_kind_list (0, TRUE, " or ");
}

/* "PREFIX" + the field's doc + " (default D)" for an int field. */
static const char *
field_help (NlCliDataOptions *d, const char *prefix, const char *field)
{
  const NlRunField *f = nl_run_config_find_field (field);
  if (f->type == NL_RUN_FIELD_INT)
    return text (d, g_strdup_printf ("%s%s (default %g)", prefix, f->doc, f->def));
  if (f->def_text)
    return text (d, g_strdup_printf ("%s%s (default %s)", prefix, f->doc, f->def_text));
  return text (d, g_strdup_printf ("%s%s", prefix, f->doc));
}

/* The text and series options: their help is the run settings' docs. */
static void
add_sequence_entries (NlCliDataOptions *d, GArray *entries, const char *prefix)
{
  const GOptionEntry add[] = {
    { "text-column", 0, 0, G_OPTION_ARG_STRING, &d->text_column, field_help (d, prefix, "text_column"), "NAME" },
    { "tokenizer", 0, 0, G_OPTION_ARG_STRING, &d->tokenizer, field_help (d, prefix, "tokenizer"), "word|char" },
    { "vocab-size", 0, 0, G_OPTION_ARG_INT, &d->vocab_size, field_help (d, prefix, "vocab_size"), "N" },
    { "min-count", 0, 0, G_OPTION_ARG_INT, &d->min_count, field_help (d, prefix, "min_count"), "N" },
    { "max-length", 0, 0, G_OPTION_ARG_INT, &d->max_length, field_help (d, prefix, "max_length"), "N" },
    { "target", 0, 0, G_OPTION_ARG_STRING, &d->target, field_help (d, prefix, "target"), "COLUMN" },
    { "window", 0, 0, G_OPTION_ARG_INT, &d->window, field_help (d, prefix, "window"), "N" },
    { "horizon", 0, 0, G_OPTION_ARG_INT, &d->horizon, field_help (d, prefix, "horizon"), "H" },
  };
  g_array_append_vals (entries, add, G_N_ELEMENTS (add));
}

void
nl_cli_data_options_add_entries (NlCliDataOptions *d, GArray *entries, const char *prefix,
                                 const char *dataset_note, const char *mean_note)
{
  const NlRunField *val = nl_run_config_find_field ("val_fraction");
  g_autofree char *synopsis = nl_cli_dataset_synopsis ();
  g_autofree char *csv = kinds_using (NL_DATASET_USES_LABEL_COLUMN);
  g_autofree char *images = kinds_using (NL_DATASET_USES_IMAGE_SIZE);
  g_autofree char *split = kinds_using (NL_DATASET_USES_SPLIT);
  g_autofree char *mean = mean_note ? g_strdup (mean_note) : norm_note (FALSE);
  g_autofree char *std = mean_note ? g_strdup (mean_note) : norm_note (TRUE);
  const GOptionEntry add[] = {
    { "dataset", 'd', 0, G_OPTION_ARG_STRING, &d->dataset,
      text (d, g_strdup_printf ("%s%s (%s)", prefix, synopsis, dataset_note)), "SPEC" },
    { "label-column", 0, 0, G_OPTION_ARG_STRING, &d->label_column,
      text (d, g_strdup_printf ("%s%sthe label column, by name or 0-based index (default: the last)", prefix, csv)),
      "NAME|INDEX" },
    { "regression", 0, 0, G_OPTION_ARG_NONE, &d->regression,
      text (d, g_strdup_printf ("%s%sthe label is a real value (use --loss L2Loss)", prefix, csv)), NULL },
    { "image-size", 0, 0, G_OPTION_ARG_STRING, &d->image_size,
      text (d, g_strdup_printf ("%s%sresize every image to WxH (default: the first image's size)", prefix, images)),
      "WxH" },
    { "val-dataset", 0, 0, G_OPTION_ARG_STRING, &d->val_dataset,
      text (d, g_strdup_printf ("%sEvaluate on all of this dataset (a split by file) instead of the test split",
                                prefix)), "SPEC" },
    { "val-fraction", 0, 0, G_OPTION_ARG_DOUBLE, &d->val_fraction,
      text (d, g_strdup_printf ("%s%sshare held out for evaluation (default %g)", prefix, split, val->def)),
      "F" },
    { "mean", 0, 0, G_OPTION_ARG_DOUBLE, &d->mean,
      text (d, g_strdup_printf ("%sInput normalisation mean (%s)", prefix, mean)), "M" },
    { "std", 0, 0, G_OPTION_ARG_DOUBLE, &d->std,
      text (d, g_strdup_printf ("%sInput normalisation std (%s)", prefix, std)), "S" },
  };
  g_array_append_vals (entries, add, G_N_ELEMENTS (add));
  add_sequence_entries (d, entries, prefix);
}

gboolean
nl_cli_data_options_given (const NlCliDataOptions *d)
{
  return d->dataset || d->label_column || d->regression || d->image_size || d->val_dataset || !isnan (d->val_fraction)
         || !isnan (d->mean) || !isnan (d->std) || d->text_column || d->tokenizer || d->target || d->vocab_size >= 0
         || d->min_count >= 0 || d->max_length >= 0 || d->window >= 0 || d->horizon >= 0;
}

/* NAN: not given, nothing to check. */
static gboolean
check (const char *field, const char *option, double v, GError **error)
{
  return isnan (v) || nl_run_field_check (nl_run_config_find_field (field), option, v, error);
}

/* -1: not given (every int field's minimum is above it). */
static gboolean
check_int (const char *field, const char *option, int v, GError **error)
{
  return v == -1 || nl_run_field_check (nl_run_config_find_field (field), option, v, error);
}

int
nl_cli_data_options_finish (NlCliDataOptions *d)
{
  g_autoptr (GError) error = NULL;
  const NlRunField *width = nl_run_config_find_field ("image_width");

  if (!check ("val_fraction", "--val-fraction", d->val_fraction, &error) || !check ("std", "--std", d->std, &error)
      || !check ("mean", "--mean", d->mean, &error))
    return nl_cli_usage_error ("%s", error->message);
  if (!check_int ("vocab_size", "--vocab-size", d->vocab_size, &error)
      || !check_int ("min_count", "--min-count", d->min_count, &error)
      || !check_int ("max_length", "--max-length", d->max_length, &error)
      || !check_int ("window", "--window", d->window, &error) || !check_int ("horizon", "--horizon", d->horizon, &error))
    return nl_cli_usage_error ("%s", error->message);
  NlTokenizerKind kind;
  if (d->tokenizer && (!*d->tokenizer || !nl_tokenizer_kind_parse (d->tokenizer, &kind)))
    return nl_cli_usage_error ("--tokenizer must be word or char, not '%s'", d->tokenizer);
  if (d->image_size && sscanf (d->image_size, "%dx%d", &d->image_width, &d->image_height) != 2)
    return nl_cli_usage_error ("--image-size must look like 32x32, not '%s'", d->image_size);
  if (d->image_size && (d->image_width < 1 || d->image_height < 1 || d->image_width > width->max
                        || d->image_height > width->max))
    return nl_cli_usage_error ("--image-size must be between 1x1 and %gx%g", width->max, width->max);
  return 0;
}

static void
apply_sequence (const NlCliDataOptions *d, NlRunConfig *rc)
{
  if (d->text_column)
    nl_run_config_set_text ((char **) &rc->data.text_column, d->text_column);
  if (d->tokenizer)
    nl_tokenizer_kind_parse (d->tokenizer, &rc->data.tokenizer);  /* checked by finish */
  if (d->target)
    nl_run_config_set_text ((char **) &rc->data.target_column, d->target);
  const struct { int v; int *slot; } ints[] = {
    { d->vocab_size, &rc->data.vocab_size }, { d->min_count, &rc->data.min_count },
    { d->max_length, &rc->data.max_length }, { d->window, &rc->data.window }, { d->horizon, &rc->data.horizon },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (ints); i++)
    if (ints[i].v != -1)
      *ints[i].slot = ints[i].v;
}

void
nl_cli_data_options_apply (const NlCliDataOptions *d, NlRunConfig *rc, gboolean dataset_defaults)
{
  if (dataset_defaults)
    nl_run_config_set_dataset (rc, d->dataset ? d->dataset : rc->dataset);
  else if (d->dataset)
    nl_run_config_set_text (&rc->dataset, d->dataset);
  if (!isnan (d->mean))
    rc->mean = (float) d->mean;
  if (!isnan (d->std))
    rc->std = (float) d->std;
  if (d->val_dataset)
    nl_run_config_set_text (&rc->val_dataset, d->val_dataset);
  if (d->label_column)
    nl_run_config_set_text ((char **) &rc->data.label_column, d->label_column);
  if (d->regression)
    rc->data.regression = TRUE;
  if (d->image_size)
    {
      rc->data.image_width = d->image_width;
      rc->data.image_height = d->image_height;
    }
  if (!isnan (d->val_fraction))
    rc->data.val_fraction = d->val_fraction;
  apply_sequence (d, rc);
}
