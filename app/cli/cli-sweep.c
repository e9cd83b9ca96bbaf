/* cli-sweep.c — netloom-cli sweep and sweeps */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli-common.h"
#include "cli-train-options.h"
#include "core/nl-comm.h"
#include "engine/session/nl-sweep.h"

typedef struct {
  gboolean json;
  gint64 sweep;
  const char *metric, *space;
} SweepOutput;

static char *
value_text (double v, gboolean json)
{
  char buf[64];
  return json ? g_strdup (nl_cli_json_number (buf, sizeof buf, 5, v))
              : isfinite (v) ? g_strdup_printf ("%.5f", v) : g_strdup ("–");
}

/* "lr=0.0123 fc1.units=256" from a trial's stored values. */
static char *
describe (const char *space_text, const char *params_json)
{
  g_autoptr (NlSweepSpace) space = nl_sweep_space_parse (space_text, NULL);
  g_autofree double *point = space ? g_new0 (double, nl_sweep_space_dim (space)) : NULL;
  if (!space || !params_json || !nl_sweep_space_point_from_json (space, params_json, point, NULL))
    return g_strdup (params_json ? params_json : "");
  return nl_sweep_space_point_describe (space, point);
}

/* One trial as JSON (no newline) or as a line for people; n_trials 0:
 * without the count of trials done. */
static char *
trial_text (const NlSweepTrial *t, gint64 sweep, const char *metric, const char *space, gboolean json, int n_done,
            int n_trials)
{
  g_autofree char *v = value_text (t->value, json);
  if (json)
    return g_strdup_printf ("{\"sweep\":%" G_GINT64_FORMAT ",\"trial\":%d,\"run\":%" G_GINT64_FORMAT ",\"status\":\"%s\","
                            "\"epochs\":%d,\"metric\":\"%s\",\"value\":%s,\"params\":%s}", sweep, t->trial, t->run,
                            t->status, t->epochs, metric, v, t->params_json ? t->params_json : "{}");
  else
    {
      g_autofree char *count = n_trials > 0 ? g_strdup_printf ("[%d/%d] ", n_done, n_trials) : g_strdup ("");
      g_autofree char *values = describe (space, t->params_json);
      return g_strdup_printf ("%strial %d  run %" G_GINT64_FORMAT "  %-8s %d epochs  %s %s  %s", count, t->trial, t->run,
                              t->status, t->epochs, metric, v, values);
    }
}

static void
on_trial_done (gpointer user, const NlSweepTrial *t, int n_done, int n_trials)
{
  SweepOutput *o = user;
  g_autofree char *line = trial_text (t, o->sweep, o->metric, o->space, o->json, n_done, n_trials);
  printf ("%s\n", line);
  fflush (stdout);
}

static gboolean
on_keep_going (gpointer user)
{
  return !nl_cli_interrupted ();
}

/* The sweep's best trial and the epochs all its trials trained. */
static void
print_outcome (NlProject *p, gint64 sweep, gboolean json)
{
  g_autoptr (NlSweepInfo) info = nl_project_get_sweep (p, sweep, NULL);
  g_autoptr (GPtrArray) trials = nl_sweep_list_trials (p, sweep, NULL);
  const NlSweepTrial *best;
  int epochs = 0;

  if (!info || !trials)
    return;
  for (guint i = 0; i < trials->len; i++)
    epochs += ((NlSweepTrial *) g_ptr_array_index (trials, i))->epochs;
  best = nl_sweep_best_trial (trials, info->maximize);
  if (json)
    {
      g_autofree char *b = best ? trial_text (best, sweep, info->metric, info->space, TRUE, 0, 0) : g_strdup ("null");
      printf ("{\"sweep\":%" G_GINT64_FORMAT ",\"status\":\"%s\",\"trials\":%u,\"epochs\":%d,\"best\":%s}\n", sweep,
              info->status, trials->len, epochs, b);
    }
  else
    {
      g_autofree char *b = best ? trial_text (best, sweep, info->metric, info->space, FALSE, 0, 0) : g_strdup ("none");
      printf ("sweep %" G_GINT64_FORMAT " %s: %u trials, %d epochs\nbest: %s\n", sweep, info->status, trials->len, epochs,
              b);
    }
  fflush (stdout);
}

static int
run_sweep (NlProject *p, gint64 sweep, int parallel, gboolean json)
{
  g_autoptr (NlSweepInfo) info = NULL;
  g_autoptr (GError) error = NULL;
  SweepOutput out = { json, sweep, NULL, NULL };
  NlSweepCallbacks cb = { on_trial_done, on_keep_going, &out };
  gboolean ok;

  if (!(info = nl_project_get_sweep (p, sweep, &error)))
    return nl_cli_fail (error);
  out.metric = info->metric;
  out.space = info->space;
  if (!json)
    printf ("sweep %" G_GINT64_FORMAT ": %s, %d trials of %s, %s over %s, %s %s%s%s\n", sweep, info->name, info->trials,
            info->network_name ? info->network_name : "?", info->strategy, info->space,
            info->maximize ? "maximize" : "minimize", info->metric, info->prune ? ", prune " : "",
            info->prune ? info->prune : "");
  fflush (stdout);
  nl_cli_catch_interrupt ();
  ok = nl_sweep_run (p, sweep, parallel, &cb, &error);
  print_outcome (p, sweep, json);
  return ok ? 0 : nl_cli_fail (error);
}

int
nl_cli_sweep (int argc, char **argv)
{
  g_autoptr (NlCliTrainOptions) o = nl_cli_train_options_new ();
  g_autofree char *space = NULL, *strategy = NULL, *metric = NULL, *prune = NULL;
  gint64 resume = 0;
  int trials = 0, parallel = 1, status;
  gboolean maximize = FALSE, minimize = FALSE;
  g_autofree char *fixed = nl_sweep_strategy_list (TRUE, " or ");
  g_autofree char *names = nl_sweep_strategy_list (FALSE, " or ");
  g_autofree char *strategy_help = g_strdup_printf ("%s (default %s)", names, nl_sweep_strategies (NULL)[0].name);
  g_autofree char *trials_help = g_strdup_printf ("Trials to run (%s: at most the space's size; default all of it)",
                                                  fixed);
  GOptionEntry entries[] = {
    { "space", 0, 0, G_OPTION_ARG_STRING, &space, "What varies: KEY=VALUES,... with a setting (lr, momentum, "
      "optimizer, batch_size, ...) or a network parameter node.param as KEY, and a|b|c, uniform:LO:HI, "
      "log:LO:HI or int:LO:HI (each range optionally :N grid points) as VALUES", "SPACE" },
    { "trials", 0, 0, G_OPTION_ARG_INT, &trials, trials_help, "N" },
    { "strategy", 0, 0, G_OPTION_ARG_STRING, &strategy, strategy_help, "NAME" },
    { "metric", 0, 0, G_OPTION_ARG_STRING, &metric, "What the search optimises: test_accuracy (default), "
      "train_accuracy or train_loss", "NAME" },
    { "maximize", 0, 0, G_OPTION_ARG_NONE, &maximize, "Higher is better (default for accuracies)", NULL },
    { "minimize", 0, 0, G_OPTION_ARG_NONE, &minimize, "Lower is better (default for train_loss)", NULL },
    { "prune", 0, 0, G_OPTION_ARG_STRING, &prune, "Stop hopeless trials early: asha[:eta=3,min_epochs=1]", "SPEC" },
    { "parallel", 0, 0, G_OPTION_ARG_INT, &parallel, "Trials at once, the threads divided among them (default 1)",
      "N" },
    { "resume", 0, 0, G_OPTION_ARG_INT64, &resume, "Continue sweep SWEEP_ID of the project", "SWEEP_ID" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- search the run settings over many trials");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) project = NULL;
  g_autoptr (NlNetwork) net = NULL;
  const NlSweepStrategy *chosen;
  gint64 sweep;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_main_entries (ctx, o->entries, NULL);
  g_option_context_set_summary (ctx, "Runs a queue of training runs over a search space, stored in the project: "
                                "each trial is a run started with the train options as the base setting and the "
                                "trial's values applied. A line per finished trial, the best at the end.");
  g_option_context_set_description (ctx,
    "Example:\n  netloom-cli sweep --project p.netloom --network mlp --dataset fashion-mnist --epochs 4 \\\n"
    "      --space 'lr=log:1e-4:1e-1,momentum=uniform:0.5:0.99,fc1.units=int:64:512' --trials 24 \\\n"
    "      --strategy tpe --prune asha:eta=3,min_epochs=1\n"
    "  netloom-cli sweep --project p.netloom --resume 1\n");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return nl_cli_usage_error ("%s (see 'netloom-cli sweep --help')", error->message);
  if (argc > 1)
    return nl_cli_usage_error ("unexpected argument '%s'", argv[1]);
  if (!o->project_path)
    return nl_cli_usage_error ("--project FILE is required (the sweep lives in the project)");
  if (parallel < 1 || parallel > 1024)
    return nl_cli_usage_error ("--parallel must be between 1 and 1024, not %d", parallel);
  if (nl_comm_world () && parallel > 1)
    return nl_cli_usage_error ("--parallel %d cannot run under mpirun: each trial trains on all %d processes "
                               "together, one trial at a time", parallel, nl_comm_world ()->size);
  /* under mpirun: rank 0 runs the sweep, the others train each trial with it */
  if (nl_comm_world () && nl_comm_world ()->rank > 0)
    return nl_cli_follow (NULL, NULL);
  if (resume)
    {
      if (space || o->network || trials || strategy || metric || prune)
        return nl_cli_usage_error ("--resume continues a sweep as it was stored: it takes only --project, "
                                   "--parallel and --json");
      if (!(project = nl_project_open (o->project_path, FALSE, &error)))
        return nl_cli_fail (error);
      return run_sweep (project, resume, parallel, o->json);
    }
  if (!o->network)
    return nl_cli_usage_error ("--network NAME|FILE is required");
  if (!space)
    return nl_cli_usage_error ("--space is required, e.g. 'lr=log:1e-4:1e-1,optimizer=sgd|adam'");
  if (maximize && minimize)
    return nl_cli_usage_error ("--maximize and --minimize exclude each other");
  if (!strategy)
    strategy = g_strdup (nl_sweep_strategies (NULL)[0].name);
  if (!metric)
    metric = g_strdup ("test_accuracy");
  if (!maximize && !minimize)
    maximize = strcmp (metric, "train_loss") != 0;
  if (!trials && !((chosen = nl_sweep_strategy_lookup (strategy, NULL)) && chosen->fixed_size))
    return nl_cli_usage_error ("--trials N is required (only %s knows its own size)", fixed);
  if ((status = nl_cli_train_options_finish (o)) != 0)
    return status;
  /* everything but the network's parameters, before the project is opened */
  if (!nl_sweep_check (space, strategy, metric, prune, NULL, &trials, &error))
    return nl_cli_usage_error ("%s", error->message);

  if (!(project = nl_project_open (o->project_path, FALSE, &error)))
    return nl_cli_fail (error);
  if (!g_file_test (o->network, G_FILE_TEST_EXISTS))
    {
      /* a network stored in the project, by name */
      g_autofree char *json_text = nl_project_load_network (project, o->network, 0, &error);
      if (!json_text)
        return nl_cli_fail (error);
      net = nl_network_load_data (json_text, -1, &error);
    }
  else
    net = nl_network_load_file (o->network, &error);
  if (!net)
    return nl_cli_fail (error);
  if (!nl_sweep_check (space, strategy, metric, prune, net, &trials, &error))
    return nl_cli_usage_error ("%s", error->message);
  sweep = nl_sweep_create (project, o->run_name, net, &o->cfg, space, strategy, trials, metric, maximize, prune,
                           parallel, &error);
  if (sweep <= 0)
    return nl_cli_fail (error);
  return run_sweep (project, sweep, parallel, o->json);
}

int
nl_cli_sweeps (int argc, char **argv)
{
  g_autofree char *path = NULL;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON object per sweep", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- list the sweeps of a project");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  g_autoptr (GPtrArray) sweeps = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return nl_cli_usage_error ("%s (see 'netloom-cli sweeps --help')", error->message);
  if (argc > 1)
    return nl_cli_usage_error ("unexpected argument '%s'", argv[1]);
  if (!path)
    return nl_cli_usage_error ("--project FILE is required");
  if (!(p = nl_project_open (path, FALSE, &error)) || !(sweeps = nl_project_list_sweeps (p, &error)))
    return nl_cli_fail (error);
  for (guint i = 0; i < sweeps->len; i++)
    {
      NlSweepInfo *s = g_ptr_array_index (sweeps, i);
      g_autoptr (GPtrArray) trials = nl_sweep_list_trials (p, s->id, &error);
      const NlSweepTrial *best;
      int epochs = 0, done = 0;
      if (!trials)
        return nl_cli_fail (error);
      for (guint k = 0; k < trials->len; k++)
        {
          const NlSweepTrial *t = g_ptr_array_index (trials, k);
          epochs += t->epochs;
          done += !strcmp (t->status, "finished") || !strcmp (t->status, "pruned") || !strcmp (t->status, "failed");
        }
      best = nl_sweep_best_trial (trials, s->maximize);
      if (json)
        {
          g_autofree char *name = g_strescape (s->name ? s->name : "", NULL);
          g_autofree char *space = g_strescape (s->space, NULL);
          g_autofree char *prune = s->prune ? g_strdup_printf ("\"%s\"", s->prune) : g_strdup ("null");
          g_autofree char *b = best ? trial_text (best, s->id, s->metric, s->space, TRUE, 0, 0) : g_strdup ("null");
          printf ("{\"id\":%" G_GINT64_FORMAT ",\"name\":\"%s\",\"status\":\"%s\",\"network\":\"%s\","
                  "\"strategy\":\"%s\",\"space\":\"%s\",\"metric\":\"%s\",\"maximize\":%s,\"prune\":%s,"
                  "\"parallel\":%d,\"trials\":%d,\"trials_done\":%d,\"runs\":%u,\"epochs\":%d,\"best\":%s}\n",
                  s->id, name, s->status, s->network_name ? s->network_name : "", s->strategy, space, s->metric,
                  s->maximize ? "true" : "false", prune, s->parallel, s->trials, done, trials->len, epochs, b);
        }
      else
        {
          g_autofree char *v = value_text (best ? best->value : NAN, FALSE);
          printf ("%4" G_GINT64_FORMAT "  %-9s %-7s %-12s %d/%d trials  %d epochs  best %s %s", s->id, s->status,
                  s->strategy, s->network_name ? s->network_name : "?", done, s->trials, epochs, s->metric, v);
          if (best)
            printf (" (trial %d, run %" G_GINT64_FORMAT ")", best->trial, best->run);
          printf ("  %s\n", s->name ? s->name : "");
        }
    }
  return 0;
}
