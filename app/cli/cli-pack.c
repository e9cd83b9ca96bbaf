/* cli-pack.c — netloom-cli pack: any dataset into one packed record file. */
#include <stdio.h>

#include "cli-common.h"
#include "cli-data-options.h"
#include "engine/data/nl-dataset-kind.h"
#include "engine/data/nl-packed-dataset.h"

#define MAX_LISTED 100 /* damaged records listed one by one; the rest counted */

static void
print_damaged (gpointer user, const GError *e)
{
  int64_t *listed = user;
  if ((*listed)++ < MAX_LISTED)
    printf ("%s\n", e->message);
}

/* pack --verify FILE: every record of a packed file checked. */
static int
verify (const char *path)
{
  g_autoptr (GError) error = NULL;
  NlPackedVerify v;
  int64_t listed = 0;
  if (!nl_packed_dataset_verify (path, print_damaged, &listed, &v, &error))
    return nl_cli_fail (error);
  if (listed > MAX_LISTED)
    printf ("... and %" G_GINT64_FORMAT " more damaged records\n", listed - MAX_LISTED);
  printf ("%s: %" G_GINT64_FORMAT " records checked, ", path, v.n_records);
  if (v.n_damaged)
    printf ("%" G_GINT64_FORMAT " damaged\n", v.n_damaged);
  else if (v.version < 2)
    printf ("structure OK; format version %d has no checksums, so damage inside a record cannot be seen "
            "(pack it again to add them)\n", v.version);
  else
    printf ("OK\n");
  return v.n_damaged ? 1 : 0;
}

int
nl_cli_pack (int argc, char **argv)
{
  g_autofree char *dataset = NULL, *output = NULL, *label_column = NULL, *image_size = NULL, *check = NULL;
  gboolean test_split = FALSE, regression = FALSE;
  g_autofree char *synopsis = nl_cli_dataset_synopsis ();
  g_autofree char *csv = nl_dataset_kind_list (NL_DATASET_USES_LABEL_COLUMN, FALSE, ", ");
  g_autofree char *images = nl_dataset_kind_list (NL_DATASET_USES_IMAGE_SIZE, FALSE, ", ");
  g_autofree char *dataset_help = g_strdup_printf ("What to pack: %s", synopsis);
  g_autofree char *column_help = g_strdup_printf ("%s: the label column (name or index)", csv);
  g_autofree char *regression_help = g_strdup_printf ("%s: the label is a real value", csv);
  g_autofree char *size_help = g_strdup_printf ("%s: resize images to WxH", images);
  GOptionEntry entries[] = {
    { "dataset", 'd', 0, G_OPTION_ARG_STRING, &dataset, dataset_help, "SPEC" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "The packed file to write (e.g. train.rec)", "FILE" },
    { "test", 0, 0, G_OPTION_ARG_NONE, &test_split, "Pack the test split instead of the training split", NULL },
    { "label-column", 0, 0, G_OPTION_ARG_STRING, &label_column, column_help, "COL" },
    { "regression", 0, 0, G_OPTION_ARG_NONE, &regression, regression_help, NULL },
    { "image-size", 0, 0, G_OPTION_ARG_STRING, &image_size, size_help, "WxH" },
    { "verify", 0, 0, G_OPTION_ARG_FILENAME, &check, "Check every record of a packed file instead (exit 1 on "
      "damage)", "FILE" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- pack a dataset into a record file");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = NULL;
  NlDatasetOptions opts = { .label_column = NULL };

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx, "Writes every sample into one file of records that N loader threads can split "
                                     "between them without an index; train on it with --dataset packed:FILE.");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return nl_cli_usage_error ("%s (see 'netloom-cli pack --help')", error->message);
  if (argc > 1)
    return nl_cli_usage_error ("unexpected argument '%s'", argv[1]);
  if (check && (dataset || output))
    return nl_cli_usage_error ("--verify FILE takes no --dataset or --output");
  if (check)
    return verify (check);
  if (!dataset || !output)
    return nl_cli_usage_error ("--dataset SPEC and --output FILE are required (or --verify FILE)");
  if (image_size && sscanf (image_size, "%dx%d", &opts.image_width, &opts.image_height) != 2)
    return nl_cli_usage_error ("--image-size must look like 32x32, not '%s'", image_size);
  opts.label_column = label_column;
  opts.regression = regression;
  ds = nl_dataset_open_full (dataset, !test_split, &opts, &error);
  if (!ds || !nl_record_pack_dataset (ds, output, NULL, &error))
    return nl_cli_fail (error);
  printf ("packed %" G_GINT64_FORMAT " samples of %s into %s\n", ds->length, ds->description, output);
  return 0;
}
