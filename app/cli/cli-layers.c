/* cli-layers.c — netloom-cli layers: a run's layer statistics at one step
 * as a table, one row per weight tensor or node output, read back from its
 * stored metrics (layer/<what>/<stat>). */
#include "cli-common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The columns, in the order they are printed; first_nonfinite last. */
static const char *const stats[] = { "weight_norm", "grad_norm", "update_ratio", "act_mean", "act_std",
                                     "dead_fraction", "first_nonfinite" };
#define N_STATS G_N_ELEMENTS (stats)
#define NONFINITE (N_STATS - 1)

typedef struct {
  char *what;                    /* "fc1.weight" or "fc1" */
  double v[N_STATS];             /* NAN: none */
} Row;

static void
row_clear (gpointer data)
{
  g_free (((Row *) data)->what);
}

/* "layer/fc1.weight/grad_norm" into its row and column; FALSE for other metrics. */
static gboolean
split_name (const char *name, char **what, int *stat)
{
  const char *slash;
  if (!g_str_has_prefix (name, "layer/") || !(slash = strrchr (name, '/')) || slash == name + 5)
    return FALSE;
  for (guint s = 0; s < N_STATS; s++)
    if (!strcmp (slash + 1, stats[s]))
      {
        *what = g_strndup (name + 6, slash - (name + 6));
        *stat = (int) s;
        return TRUE;
      }
  return FALSE;
}

static Row *
row_for (GArray *rows, char *what)
{
  for (guint i = 0; i < rows->len; i++)
    if (!strcmp (g_array_index (rows, Row, i).what, what))
      {
        g_free (what);
        return &g_array_index (rows, Row, i);
      }
  Row r = { .what = what };
  for (guint s = 0; s < N_STATS; s++)
    r.v[s] = NAN;
  g_array_append_val (rows, r);
  return &g_array_index (rows, Row, rows->len - 1);
}

/* The rows of step, first_nonfinite from whatever step it was made at;
 * steps receives the steps statistics were recorded at, oldest first. */
static GArray *
collect (GArray *metrics, gint64 step, GArray *steps)
{
  GArray *rows = g_array_new (FALSE, TRUE, sizeof (Row));
  g_array_set_clear_func (rows, row_clear);
  for (int pass = 0; pass < 2; pass++)
    for (guint i = 0; i < metrics->len; i++)
      {
        const NlMetricRow *m = &g_array_index (metrics, NlMetricRow, i);
        char *what;
        int stat;
        if (!split_name (m->name, &what, &stat))
          continue;
        if (pass == 0)
          {
            /* the steps statistics were recorded at, and the latest */
            if (stat != (int) NONFINITE && (steps->len == 0 || g_array_index (steps, gint64, steps->len - 1) != m->step))
              g_array_append_val (steps, m->step);
            g_free (what);
            continue;
          }
        if (stat == (int) NONFINITE || m->step == step)
          row_for (rows, what)->v[stat] = m->value;
        else
          g_free (what);
      }
  return rows;
}

static void
print_table (GArray *rows, gboolean csv)
{
  int width = 5;
  for (guint i = 0; i < rows->len; i++)
    width = MAX (width, (int) strlen (g_array_index (rows, Row, i).what));
  if (csv)
    printf ("layer");
  else
    printf ("%-*s", width, "layer");
  for (guint s = 0; s < N_STATS; s++)
    printf (csv ? ",%s" : "  %15s", stats[s]);
  printf ("\n");
  for (guint i = 0; i < rows->len; i++)
    {
      const Row *r = &g_array_index (rows, Row, i);
      if (csv)
        printf ("%s", r->what);
      else
        printf ("%-*s", width, r->what);
      for (guint s = 0; s < N_STATS; s++)
        {
          char buf[64] = "";
          if (s == NONFINITE && !isnan (r->v[s]))
            g_strlcpy (buf, r->v[s] == 1 ? "forward" : "backward", sizeof buf);
          else if (!isnan (r->v[s]))
            g_snprintf (buf, sizeof buf, "%.9g", r->v[s]);
          printf (csv ? ",%s" : "  %15s", csv || *buf ? buf : "-");
        }
      printf ("\n");
    }
}

static void
print_json (gint64 run, gint64 step, GArray *rows)
{
  printf ("{\"run\":%" G_GINT64_FORMAT ",\"step\":%" G_GINT64_FORMAT ",\"layers\":[", run, step);
  for (guint i = 0; i < rows->len; i++)
    {
      const Row *r = &g_array_index (rows, Row, i);
      g_autofree char *what = g_strescape (r->what, NULL);
      printf ("%s{\"layer\":\"%s\"", i ? "," : "", what);
      for (guint s = 0; s < N_STATS; s++)
        {
          if (s == NONFINITE && !isnan (r->v[s]))
            printf (",\"%s\":\"%s\"", stats[s], r->v[s] == 1 ? "forward" : "backward");
          else if (isfinite (r->v[s]))  /* %g of a finite double is a JSON number */
            printf (",\"%s\":%.9g", stats[s], r->v[s]);
        }
      printf ("}");
    }
  printf ("]}\n");
}

int
nl_cli_layers (int argc, char **argv)
{
  g_autofree char *path = NULL;
  gint64 run = 0, step = -1;
  gboolean csv = FALSE, json = FALSE;
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "run", 'r', 0, G_OPTION_ARG_INT64, &run, "The run", "ID" },
    { "step", 0, 0, G_OPTION_ARG_INT64, &step, "The statistics of this step (default: the latest)", "S" },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &csv, "CSV with a header", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON object", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- a run's layer statistics at one step");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  g_autoptr (GArray) metrics = NULL, rows = NULL, steps = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (NlRunInfo) info = NULL;
  int status = 0;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "layers", &status))
    return status;
  if (run <= 0)
    return nl_cli_usage_error ("--run ID is required");
  if (csv && json)
    return nl_cli_usage_error ("--csv and --json exclude each other");
  if (!(p = nl_cli_open_project (path, &status)))
    return status;
  if (!(info = nl_project_get_run (p, run, &error)) || !(metrics = nl_project_get_metrics (p, run, NULL, 0, NULL, &error)))
    return nl_cli_fail (error);
  g_array_unref (collect (metrics, step, steps));
  if (steps->len == 0)
    {
      fprintf (stderr, "netloom-cli: run %" G_GINT64_FORMAT " has no layer statistics (train with "
               "--layer-stats-every N, N > 0)\n", run);
      return 1;
    }
  if (step < 0)
    step = g_array_index (steps, gint64, steps->len - 1);
  else
    {
      gboolean found = FALSE;
      for (guint i = 0; i < steps->len; i++)
        found = found || g_array_index (steps, gint64, i) == step;
      if (!found)
        {
          fprintf (stderr, "netloom-cli: run %" G_GINT64_FORMAT " has no layer statistics at step %" G_GINT64_FORMAT
                   " (they are at steps %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT ")\n", run, step,
                   g_array_index (steps, gint64, 0), g_array_index (steps, gint64, steps->len - 1));
          return 1;
        }
    }
  g_array_set_size (steps, 0);
  rows = collect (metrics, step, steps);
  if (json)
    print_json (run, step, rows);
  else
    {
      if (!csv)
        printf ("run %" G_GINT64_FORMAT ", step %" G_GINT64_FORMAT "\n", run, step);
      print_table (rows, csv);
    }
  return 0;
}
