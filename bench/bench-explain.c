/* bench-explain.c — the cost of one explanation (nl-explain.h), per method,
 * for the lenet (1x28x28) and resnet-small (3x32x32) templates with their
 * initial weights (the cost does not depend on the values): the median
 * over REPEATS images after one warm-up, in ms, with the explainer's setup
 * (checkpoint load, program build) timed apart.
 *
 * Then the PCA of the projection (nl-pca.h) on uniform noise (a flat
 * spectrum: the most steps) of 2000 samples x 10000 features and the
 * other way round, 5000 x 800 and 1000 x 500, and t-SNE (nl-tsne.h) of
 * those up to 5000 samples.
 *
 *   build/bench/bench-explain [REPEATS]     (OMP_NUM_THREADS sets the threads) */
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "engine/formats/nl-checkpoint.h"
#include "engine/session/nl-explain.h"
#include "engine/session/nl-pca.h"
#include "engine/session/nl-tsne.h"
#include "tests/nl-test-util.h"

/* CPU seconds of this process: on a loaded machine, what the work cost
 * whatever else ran (wall-clock medians are printed beside). */
static double
cpu_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* A run of template NAME with input SHAPE holding its initial weights. */
static gint64
make_run (NlProject *p, const char *name, const char *shape)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_test_load_template (name);
  g_autoptr (NlModel) model = NULL;
  g_autoptr (GBytes) blob = NULL;
  g_autofree char *json = NULL, *hp = NULL;
  NlShape s = nl_test_parse_shape (shape);
  NlTrainPosition pos = { .optimizer = (char *) "sgd" };
  NlOptimConfig sgd;
  NlRunConfig rc;
  gint64 run;
  char text[64];

  g_snprintf (text, sizeof text, "[%d,%d,%d]", (int) s.d[0], (int) s.d[1], (int) s.d[2]);
  nl_test_ok_or_die (nl_network_set_param (net, nl_network_find (net, "data"), "shape", text, &error), error,
                     "input shape");
  nl_optim_config_init (&sgd, NL_OPTIM_SGD);
  model = nl_model_new_full (net, &s, &(NlModelOptions) { .seed = 1, .optim = &sgd }, &error);
  nl_test_ok_or_die (model != NULL, error, "model");
  json = nl_network_to_json (net);
  nl_run_config_init (&rc);
  nl_run_config_set_text (&rc.dataset, "mnist:/nonexistent");
  hp = nl_run_config_to_json (&rc);
  nl_run_config_clear (&rc);
  NlRunInfo info = { .name = (char *) name, .network_name = (char *) name, .network_json = json, .hparams_json = hp,
                     .device = (char *) "cpu", .status = (char *) "finished" };
  run = nl_project_create_run (p, &info, &error);
  blob = nl_checkpoint_save (model, &pos, &error);
  nl_test_ok_or_die (blob && run > 0, error, "run");
  nl_test_ok_or_die (nl_project_add_checkpoint (p, run, 0, 0, g_bytes_get_data (blob, NULL), g_bytes_get_size (blob),
                                                NULL, 0, TRUE, 0, &error) > 0, error, "checkpoint");
  return run;
}

static void
bench (NlProject *p, const char *name, const char *shape, int repeats)
{
  g_autoptr (GError) error = NULL;
  gint64 run = make_run (p, name, shape), t0 = g_get_monotonic_time ();
  g_autoptr (NlExplainer) e = nl_explainer_new (p, run, NULL, &error);
  NlShape s = nl_test_parse_shape (shape);
  int64_t n = nl_shape_numel (&s);
  g_autofree float *x = g_new (float, n);
  g_autofree double *ms = g_new (double, repeats), *cpu = g_new (double, repeats);

  nl_test_ok_or_die (e != NULL, error, "explainer");
  printf ("%-13s setup %.1f ms\n", name, (g_get_monotonic_time () - t0) / 1e3);
  for (int m = 0; m < NL_EXPLAIN_METHOD_COUNT; m++)
    {
      NlExplainOptions o = { .method = m, .target_class = -1 };
      for (int r = -1; r < repeats; r++)
        {
          NlExplanation ex;
          for (int64_t k = 0; k < n; k++)
            x[k] = (float) ((k * 2654435761u + (guint64) r * 97) % 1000) / 500.0f - 1.0f;
          double c0 = cpu_now ();
          t0 = g_get_monotonic_time ();
          nl_test_ok_or_die (nl_explainer_explain (e, x, &o, &ex, &error), error, "explain");
          if (r >= 0)
            {
              ms[r] = (g_get_monotonic_time () - t0) / 1e3;
              cpu[r] = (cpu_now () - c0) * 1e3;
            }
          nl_explanation_clear (&ex);
        }
      qsort (ms, repeats, sizeof (double), cmp_double);
      qsort (cpu, repeats, sizeof (double), cmp_double);
      printf ("%-13s %-10s %8.2f ms per image (median of %d, min %.2f, max %.2f); CPU %.2f ms (median)\n", name,
              nl_explain_method_name (m), ms[repeats / 2], repeats, ms[0], ms[repeats - 1], cpu[repeats / 2]);
    }
}

static void
bench_pca (int n, int f)
{
  g_autofree float *x = g_new (float, (gsize) n * f), *xy = g_new (float, 2 * n);
  g_autoptr (GRand) rng = g_rand_new_with_seed (3);
  gint64 t0;
  double c0;
  for (gsize i = 0; i < (gsize) n * f; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  c0 = cpu_now ();
  t0 = g_get_monotonic_time ();
  nl_pca_project (x, n, f, 2, xy);
  printf ("PCA %5d samples x %5d features: %.0f ms (CPU %.0f ms)\n", n, f, (g_get_monotonic_time () - t0) / 1e3,
          (cpu_now () - c0) * 1e3);
  if ((gint64) n * n > 25000000)
    return; /* t-SNE is for a few thousand samples */
  c0 = cpu_now ();
  t0 = g_get_monotonic_time ();
  nl_tsne_embed (x, n, f, 30, 1000, xy);
  printf ("t-SNE %5d samples x %5d features: %.0f ms (CPU %.0f ms)\n", n, f, (g_get_monotonic_time () - t0) / 1e3,
          (cpu_now () - c0) * 1e3);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  int repeats = argc > 1 ? atoi (argv[1]) : 21;
  g_autofree char *dir = g_dir_make_tmp ("netloom-bench-explain-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "p.netloom", NULL);
  NlProject *p = nl_project_open (path, TRUE, &error);
  nl_test_ok_or_die (p != NULL, error, "project");
  bench (p, "lenet", "1x28x28", MAX (repeats, 1));
  bench (p, "resnet-small", "3x32x32", MAX (repeats, 1));
  bench_pca (2000, 10000);
  bench_pca (10000, 2000);
  bench_pca (5000, 800);
  bench_pca (1000, 500);
  nl_project_close (p);
  nl_test_remove_tree (dir);
  return 0;
}
