/* main.c — `netloom`, the GTK workbench: options, then the application. */
#include <glib/gi18n.h>
#include <stdio.h>

#include "ui/nl-application.h"

static gboolean
parse_size (const char *text, int *w, int *h)
{
  char *end;
  gint64 a = g_ascii_strtoll (text, &end, 10), b;
  if (end == text || (*end != 'x' && *end != 'X'))
    return FALSE;
  text = end + 1;
  b = g_ascii_strtoll (text, &end, 10);
  if (end == text || *end || a < 320 || b < 240 || a > 8192 || b > 8192)
    return FALSE;
  *w = (int) a;
  *h = (int) b;
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_auto (NlLaunchOptions) opts = { 0 };
  g_autofree char *size = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = NULL;
  g_autoptr (NlApplication) app = NULL;
  g_autoptr (GPtrArray) run_args = g_ptr_array_new ();
  int status;
  GOptionEntry entries[] = {
    { "screenshot", 0, 0, G_OPTION_ARG_FILENAME, &opts.screenshot,
      N_("Render the window to a PNG once the project has loaded, then exit"), N_("OUT.png") },
    { "page", 0, 0, G_OPTION_ARG_STRING, &opts.page, N_("Page to show: network, data, training or experiments"),
      N_("PAGE") },
    { "size", 0, 0, G_OPTION_ARG_STRING, &size, N_("Window size, e.g. 1280x800"), N_("WxH") },
    { "train-for-seconds", 0, 0, G_OPTION_ARG_DOUBLE, &opts.train_for_seconds,
      N_("With --screenshot: start a run on the training page and shoot after N seconds"), N_("N") },
    { "quantize-run", 0, 0, G_OPTION_ARG_INT64, &opts.quantize_run,
      N_("With --screenshot: quantize run ID from the experiments page and shoot the finished dialog"), N_("ID") },
    { "run", 0, 0, G_OPTION_ARG_INT64, &opts.run, N_("With --screenshot: the training page shows stored run N"),
      N_("N") },
    { "view", 0, 0, G_OPTION_ARG_STRING, &opts.view,
      N_("With --screenshot: the training page's view: loss, accuracy, lr, throughput or layers"), N_("VIEW") },
    { "layer", 0, 0, G_OPTION_ARG_STRING, &opts.layer,
      N_("With --screenshot: the Layers view with the histograms of layer NODE open"), N_("NODE") },
    { "explain-run", 0, 0, G_OPTION_ARG_INT64, &opts.explain_run,
      N_("With --screenshot: evaluate run ID, explain a misclassified sample and shoot the evaluation window"),
      N_("ID") },
    { "explain-method", 0, 0, G_OPTION_ARG_STRING, &opts.explain_method,
      N_("With --explain-run: saliency, gradcam (default) or occlusion"), N_("METHOD") },
    { "activations-run", 0, 0, G_OPTION_ARG_INT64, &opts.activations_run,
      N_("With --screenshot: show run ID's activations and a projection of its test set, and shoot them"), N_("ID") },
    { "network", 0, 0, G_OPTION_ARG_STRING, &opts.network,
      N_("With --screenshot: the Network page shows template NAME (lenet, text-transformer, ...)"), N_("NAME") },
    { NULL }
  };
  static const char *const pages[] = { "network", "data", "training", "experiments", NULL };
  static const char *const views[] = { "loss", "accuracy", "lr", "throughput", "layers", NULL };

  /* before the options: their help is translated */
  nl_application_init_i18n (NL_LOCALEDIR);
  /* TRANSLATORS: the argument in `netloom --help`'s usage line */
  ctx = g_option_context_new (_("[PROJECT]"));
  g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
  g_option_context_set_summary (ctx, _("The netloom workbench: build, train and compare neural networks."));
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, _("netloom: %s (see 'netloom --help')\n"), error->message);
      return 2;
    }
  if (size && !parse_size (size, &opts.width, &opts.height))
    {
      fprintf (stderr, _("netloom: --size must look like 1280x800 (320x240 to 8192x8192), not '%s'\n"), size);
      return 2;
    }
  if (opts.page && !g_strv_contains (pages, opts.page))
    {
      fprintf (stderr, _("netloom: --page must be network, data, training or experiments, not '%s'\n"), opts.page);
      return 2;
    }
  if (opts.train_for_seconds < 0 || (opts.train_for_seconds > 0 && !opts.screenshot))
    {
      fprintf (stderr, _("netloom: --train-for-seconds needs --screenshot and a positive number\n"));
      return 2;
    }
  if (opts.quantize_run < 0 || (opts.quantize_run > 0 && !opts.screenshot))
    {
      fprintf (stderr, _("netloom: --quantize-run needs --screenshot and a run id\n"));
      return 2;
    }
  if (opts.view && !g_strv_contains (views, opts.view))
    {
      fprintf (stderr, _("netloom: --view must be loss, accuracy, lr, throughput or layers, not '%s'\n"), opts.view);
      return 2;
    }
  if ((opts.run || opts.view || opts.layer) && !opts.screenshot)
    {
      fprintf (stderr, _("netloom: --run, --view and --layer need --screenshot\n"));
      return 2;
    }
  if (opts.run < 0)
    {
      fprintf (stderr, _("netloom: --run must be a run's id, not %" G_GINT64_FORMAT "\n"), opts.run);
      return 2;
    }
  if (opts.explain_run < 0 || opts.activations_run < 0 || (opts.explain_run > 0 && opts.activations_run > 0)
      || ((opts.explain_run > 0 || opts.activations_run > 0) && !opts.screenshot))
    {
      fprintf (stderr,
               _("netloom: --explain-run and --activations-run need --screenshot and a run id, one at a time\n"));
      return 2;
    }
  if (opts.network && !opts.screenshot)
    {
      fprintf (stderr, _("netloom: --network needs --screenshot\n"));
      return 2;
    }
  if (opts.explain_method && opts.explain_run <= 0)
    {
      fprintf (stderr, _("netloom: --explain-method needs --explain-run\n"));
      return 2;
    }
  if (argc > 2)
    {
      fprintf (stderr, _("netloom: one project at a time, not %d\n"), argc - 1);
      return 2;
    }
  if (argc == 2)
    {
      if (!g_file_test (argv[1], G_FILE_TEST_IS_REGULAR))
        {
          fprintf (stderr, _("netloom: %s: no such project file\n"), argv[1]);
          return 1;
        }
      opts.project = g_canonicalize_filename (argv[1], NULL);
    }
  /* a plain start hands the file to GApplication, so that a running
   * instance opens it; a screenshot is its own instance */
  app = nl_application_new (&opts);
  g_ptr_array_add (run_args, argv[0]);
  if (opts.project && !opts.screenshot)
    g_ptr_array_add (run_args, opts.project);
  g_ptr_array_add (run_args, NULL);
  status = g_application_run (G_APPLICATION (app), (int) run_args->len - 1, (char **) run_args->pdata);
  return status ? status : nl_application_get_exit_status (app);
}
