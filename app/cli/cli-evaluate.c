/* cli-evaluate.c — `evaluate` (a checkpoint's scores, class by class, and
 * its confusion matrix: the numbers of the GUI's evaluation view, from the
 * same nl_evaluate_run_on) and `predict` (classify image files, dataset
 * samples or typed texts). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "cli-common.h"
#include "core/nl-json-guard.h"
#include "engine/session/nl-evaluate.h"
#include "engine/session/nl-run-model.h"

/* --run ID or --network NAME: the run whose checkpoint is used. */
static gint64
resolve_run (NlProject *p, gint64 run, const char *network, int *status)
{
  g_autoptr (GError) error = NULL;
  if ((run > 0) == (network != NULL))
    {
      *status = nl_cli_usage_error ("give either --run ID or --network NAME");
      return 0;
    }
  if (run > 0)
    return run;
  if ((run = nl_run_find_for_network (p, network, &error)) <= 0)
    *status = nl_cli_fail (error);
  return run;
}

/* A line on stderr when the model carries no normalisation of its own,
 * saying which one is used (--json says it in its objects instead). */
static void
say_normalisation (const NlEvaluation *ev, gboolean json)
{
  if (!ev->norm_absent || json)
    return;
  if (ev->norm_given)
    fprintf (stderr, "netloom-cli: run %" G_GINT64_FORMAT " carries no input normalisation: using the given "
             "mean %g, std %g\n", ev->run, ev->mean, ev->std);
  else
    fprintf (stderr, "netloom-cli: run %" G_GINT64_FORMAT " carries no input normalisation (an imported model): "
             "inputs go in as read ([0, 1] for images, mean %g, std %g); give --mean and --std to set one\n",
             ev->run, ev->mean, ev->std);
}

/* The same for --json: {"mean": M, "std": S, "from": "run" | "given" | "none"}. */
static void
normalisation_json (JsonBuilder *jb, const NlEvaluation *ev)
{
  json_builder_set_member_name (jb, "normalisation");
  json_builder_begin_object (jb);
  json_builder_set_member_name (jb, "mean");
  json_builder_add_double_value (jb, ev->mean);
  json_builder_set_member_name (jb, "std");
  json_builder_add_double_value (jb, ev->std);
  json_builder_set_member_name (jb, "from");
  json_builder_add_string_value (jb, ev->norm_given ? "given" : ev->norm_absent ? "none" : "run");
  json_builder_end_object (jb);
}

static void
print_json (JsonBuilder *jb)
{
  g_autoptr (JsonNode) root = json_builder_get_root (jb);
  g_autofree char *text = nl_json_fix_numbers (json_to_string (root, FALSE));
  printf ("%s\n", text);
}

static void
evaluation_json (const NlEvaluation *ev)
{
  g_autoptr (JsonBuilder) jb = json_builder_new ();
  int n = ev->n_classes;
  json_builder_begin_object (jb);
  json_builder_set_member_name (jb, "run");
  json_builder_add_int_value (jb, ev->run);
  json_builder_set_member_name (jb, "checkpoint");
  json_builder_add_int_value (jb, ev->checkpoint);
  json_builder_set_member_name (jb, "epoch");
  json_builder_add_int_value (jb, ev->epoch);
  json_builder_set_member_name (jb, "int8_model");
  if (ev->int8_model > 0)
    json_builder_add_int_value (jb, ev->int8_model);
  else
    json_builder_add_null_value (jb);
  json_builder_set_member_name (jb, "images_per_s");
  if (isfinite (ev->images_per_s))
    json_builder_add_double_value (jb, ev->images_per_s);
  else
    json_builder_add_null_value (jb);
  json_builder_set_member_name (jb, "dataset");
  json_builder_add_string_value (jb, ev->dataset ? ev->dataset : "");
  normalisation_json (jb, ev);
  json_builder_set_member_name (jb, "samples");
  json_builder_add_int_value (jb, ev->n_samples);
  json_builder_set_member_name (jb, "correct");
  json_builder_add_int_value (jb, ev->n_correct);
  json_builder_set_member_name (jb, "accuracy");
  json_builder_add_double_value (jb, ev->accuracy);
  json_builder_set_member_name (jb, "macro_f1");
  json_builder_add_double_value (jb, ev->macro_f1);
  json_builder_set_member_name (jb, "weighted_f1");
  json_builder_add_double_value (jb, ev->weighted_f1);
  json_builder_set_member_name (jb, "classes");
  json_builder_begin_array (jb);
  for (int c = 0; c < n; c++)
    {
      json_builder_begin_object (jb);
      json_builder_set_member_name (jb, "name");
      json_builder_add_string_value (jb, ev->class_names[c]);
      json_builder_set_member_name (jb, "precision");
      json_builder_add_double_value (jb, ev->precision[c]);
      json_builder_set_member_name (jb, "recall");
      json_builder_add_double_value (jb, ev->recall[c]);
      json_builder_set_member_name (jb, "f1");
      json_builder_add_double_value (jb, ev->f1[c]);
      json_builder_set_member_name (jb, "support");
      json_builder_add_int_value (jb, ev->support[c]);
      json_builder_end_object (jb);
    }
  json_builder_end_array (jb);
  /* rows: true class; columns: predicted */
  json_builder_set_member_name (jb, "confusion");
  json_builder_begin_array (jb);
  for (int t = 0; t < n; t++)
    {
      json_builder_begin_array (jb);
      for (int k = 0; k < n; k++)
        json_builder_add_int_value (jb, ev->confusion[t * n + k]);
      json_builder_end_array (jb);
    }
  json_builder_end_array (jb);
  json_builder_end_object (jb);
  print_json (jb);
}

static void
evaluation_text (const NlEvaluation *ev)
{
  int n = ev->n_classes, w = 5;
  for (int c = 0; c < n; c++)
    w = MAX (w, (int) strlen (ev->class_names[c]));
  g_autofree char *int8 = ev->int8_model > 0 ? g_strdup_printf (", INT8 model %" G_GINT64_FORMAT, ev->int8_model)
                                              : g_strdup ("");
  printf ("run %" G_GINT64_FORMAT ", checkpoint %" G_GINT64_FORMAT " (epoch %d)%s on %s\n", ev->run, ev->checkpoint,
          ev->epoch, int8, ev->dataset ? ev->dataset : "?");
  printf ("accuracy %.4f (%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT ")  macro F1 %.4f  weighted F1 %.4f\n",
          ev->accuracy, ev->n_correct, ev->n_samples, ev->macro_f1, ev->weighted_f1);
  if (isfinite (ev->images_per_s))
    printf ("%.0f images/s in the model\n", ev->images_per_s);
  printf ("\n");
  printf ("%-*s  precision  recall      F1  support\n", w, "class");
  for (int c = 0; c < n; c++)
    printf ("%-*s  %9.4f  %6.4f  %6.4f  %7" G_GINT64_FORMAT "\n", w, ev->class_names[c], ev->precision[c],
            ev->recall[c], ev->f1[c], ev->support[c]);
  printf ("\nconfusion matrix (rows: true class, columns: predicted, in the order above)\n");
  for (int t = 0; t < n; t++)
    {
      printf ("%-*s", w, ev->class_names[t]);
      for (int k = 0; k < n; k++)
        printf (" %6" G_GINT64_FORMAT, ev->confusion[t * n + k]);
      printf ("\n");
    }
}

int
nl_cli_evaluate (int argc, char **argv)
{
  g_autofree char *path = NULL, *which = NULL, *network = NULL, *dataset = NULL;
  gint64 run = 0;
  gboolean json = FALSE, int8 = FALSE;
  NlEvalNorm norm = { NAN, NAN };
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "run", 'r', 0, G_OPTION_ARG_INT64, &run, "The run", "ID" },
    { "checkpoint", 'c', 0, G_OPTION_ARG_STRING, &which, "best (default), last or an epoch", "ID" },
    { "network", 'n', 0, G_OPTION_ARG_STRING, &network, "A project network: its newest run with weights", "NAME" },
    { "dataset", 'd', 0, G_OPTION_ARG_STRING, &dataset, "Evaluate on this dataset's test split (default: the run's)",
      "SPEC" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON object", NULL },
    { "int8", 0, 0, G_OPTION_ARG_NONE, &int8, "The run's INT8 model (of --checkpoint's checkpoint, else the newest)",
      NULL },
    { "mean", 0, 0, G_OPTION_ARG_DOUBLE, &norm.mean, "Input normalisation mean (default: the run's)", "M" },
    { "std", 0, 0, G_OPTION_ARG_DOUBLE, &norm.std, "Input normalisation std (default: the run's)", "S" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- a checkpoint's accuracy, per-class scores and confusion matrix");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  g_autoptr (NlEvaluation) ev = NULL;
  int status = 0;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "evaluate", &status))
    return status;
  if (argc > 1)
    return nl_cli_usage_error ("unexpected argument '%s'", argv[1]);
  if (!(p = nl_cli_open_project (path, &status)) || (run = resolve_run (p, run, network, &status)) <= 0)
    return status;
  if (!(ev = nl_evaluate_run_norm (p, run, which, dataset, int8, &norm, &error)))
    return nl_cli_fail (error);
  say_normalisation (ev, json);
  if (json)
    evaluation_json (ev);
  else
    evaluation_text (ev);
  return 0;
}

/* ---- predict ---- */

static int
compare_desc (const void *a, const void *b, void *probs)
{
  double x = ((const double *) probs)[*(const int *) a], y = ((const double *) probs)[*(const int *) b];
  return x > y ? -1 : x < y ? 1 : *(const int *) a - *(const int *) b;
}

/* One line (or JSON object) for one input; input is its JSON value. */
static void
print_prediction (const NlEvaluation *ev, JsonNode *input, const char *label, const double *probs, int top,
                  gboolean json)
{
  gboolean timed = isfinite (ev->latency_ms) && ev->latency_ms > 0;
  int n = ev->n_classes;
  g_autofree int *order = g_new (int, n);
  for (int c = 0; c < n; c++)
    order[c] = c;
  g_qsort_with_data (order, n, sizeof (int), compare_desc, (gpointer) probs);
  top = MIN (top, n);
  if (json)
    {
      g_autoptr (JsonBuilder) jb = json_builder_new ();
      json_builder_begin_object (jb);
      json_builder_set_member_name (jb, "input");
      json_builder_add_value (jb, input);
      if (label)
        {
          json_builder_set_member_name (jb, "label");
          json_builder_add_string_value (jb, label);
        }
      normalisation_json (jb, ev);
      json_builder_set_member_name (jb, "predicted");
      json_builder_add_string_value (jb, ev->class_names[order[0]]);
      json_builder_set_member_name (jb, "probabilities");
      json_builder_begin_array (jb);
      for (int c = 0; c < n; c++)
        json_builder_add_double_value (jb, probs[c]);
      json_builder_end_array (jb);
      /* per-class scores by name: {"sports": 0.97, ...} */
      json_builder_set_member_name (jb, "scores");
      json_builder_begin_object (jb);
      for (int c = 0; c < n; c++)
        {
          json_builder_set_member_name (jb, ev->class_names[c]);
          json_builder_add_double_value (jb, probs[c]);
        }
      json_builder_end_object (jb);
      json_builder_set_member_name (jb, "top");
      json_builder_begin_array (jb);
      for (int k = 0; k < top; k++)
        {
          json_builder_begin_array (jb);
          json_builder_add_string_value (jb, ev->class_names[order[k]]);
          json_builder_add_double_value (jb, probs[order[k]]);
          json_builder_end_array (jb);
        }
      json_builder_end_array (jb);
      /* the model's time for this one input (batch 1), decoding aside */
      json_builder_set_member_name (jb, "latency_ms");
      if (timed)
        json_builder_add_double_value (jb, ev->latency_ms);
      else
        json_builder_add_null_value (jb);
      json_builder_set_member_name (jb, "images_per_s");
      if (timed)
        json_builder_add_double_value (jb, 1e3 / ev->latency_ms);
      else
        json_builder_add_null_value (jb);
      json_builder_end_object (jb);
      print_json (jb);
      return;
    }
  {
    g_autofree char *what = json_node_get_value_type (input) == G_TYPE_STRING
                              ? g_strdup (json_node_get_string (input))
                              : g_strdup_printf ("sample %" G_GINT64_FORMAT, json_node_get_int (input));
    printf ("%s", what);
    if (label)
      printf (" (label %s)", label);
    printf (":");
    for (int k = 0; k < top; k++)
      printf ("%s %s %.4f", k ? "," : "", ev->class_names[order[k]], probs[order[k]]);
    printf ("\n");
    json_node_unref (input);
  }
}

int
nl_cli_predict (int argc, char **argv)
{
  g_autofree char *path = NULL, *which = NULL, *network = NULL, *dataset = NULL;
  g_auto (GStrv) texts = NULL;
  gint64 run = 0, limit = -1;
  int top = 5;
  gboolean json = FALSE, int8 = FALSE;
  NlEvalNorm norm = { NAN, NAN };
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "run", 'r', 0, G_OPTION_ARG_INT64, &run, "The run", "ID" },
    { "checkpoint", 'c', 0, G_OPTION_ARG_STRING, &which, "best (default), last or an epoch", "ID" },
    { "network", 'n', 0, G_OPTION_ARG_STRING, &network, "A project network: its newest run with weights", "NAME" },
    { "top", 'k', 0, G_OPTION_ARG_INT, &top, "Classes listed per input (default 5)", "K" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON object per input", NULL },
    { "dataset", 'd', 0, G_OPTION_ARG_STRING, &dataset, "Classify this dataset's test samples instead of files",
      "SPEC" },
    { "limit", 0, 0, G_OPTION_ARG_INT64, &limit, "With --dataset: the first N samples (default all)", "N" },
    { "int8", 0, 0, G_OPTION_ARG_NONE, &int8, "The run's INT8 model (of --checkpoint's checkpoint, else the newest)",
      NULL },
    { "text", 't', 0, G_OPTION_ARG_STRING_ARRAY, &texts, "Classify this text with a text run (repeatable)", "TEXT" },
    { "mean", 0, 0, G_OPTION_ARG_DOUBLE, &norm.mean, "Input normalisation mean (default: the run's)", "M" },
    { "std", 0, 0, G_OPTION_ARG_DOUBLE, &norm.std, "Input normalisation std (default: the run's)", "S" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[FILE...] - classify PNG/JPEG files, dataset samples or "
                                                         "texts");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  g_autoptr (NlEvaluation) ev = NULL;
  int status = 0;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "predict", &status))
    return status;
  if ((argc > 1) + (dataset != NULL) + (texts != NULL) != 1)
    return nl_cli_usage_error ("give image FILEs, --dataset SPEC or --text TEXT (one of them)");
  if (top < 1)
    return nl_cli_usage_error ("--top must be at least 1");
  if (limit != -1 && (!dataset || limit < 0))
    return nl_cli_usage_error ("--limit N goes with --dataset and is at least 0");
  if (!(p = nl_cli_open_project (path, &status)) || (run = resolve_run (p, run, network, &status)) <= 0)
    return status;
  if (!(ev = nl_evaluation_open_norm (p, run, which, dataset, dataset != NULL, int8, &norm, &error)))
    return nl_cli_fail (error);
  say_normalisation (ev, json);

  for (int i = 0; texts && texts[i]; i++)
    {
      g_autofree double *probs = NULL;
      if (!nl_evaluation_predict_text (ev, texts[i], &probs, &error))
        return nl_cli_fail (error);
      print_prediction (ev, json_node_init_string (json_node_alloc (), texts[i]), NULL, probs, top, json);
    }
  if (texts)
    return 0;

  if (dataset)
    {
      int64_t n = nl_evaluation_n_samples (ev);
      if (limit >= 0)
        n = MIN (n, limit);
      for (int64_t i = 0; i < n; i++)
        {
          g_autofree double *probs = NULL;
          int label;
          if (!nl_evaluation_predict_sample (ev, i, &probs, &label, &error))
            return nl_cli_fail (error);
          JsonNode *input = json_node_init_int (json_node_alloc (), i);
          print_prediction (ev, input, label >= 0 && label < ev->n_classes ? ev->class_names[label] : NULL, probs,
                            top, json);
        }
      return 0;
    }
  for (int i = 1; i < argc; i++)
    {
      g_autofree double *probs = NULL;
      if (!nl_evaluation_predict_image_file (ev, argv[i], &probs, NULL, &error))
        return nl_cli_fail (error);
      print_prediction (ev, json_node_init_string (json_node_alloc (), argv[i]), NULL, probs, top, json);
    }
  return 0;
}
