/* bench-infer.c — inference speed of a network (no backward, no optimizer)
 * on generated data, to compare with bench/torch_infer.py.
 *
 *   build/bench/bench-infer --network data/networks/lenet.json
 *       [--sample 1,28,28] [--batch 128] [--iters 50] [--warmup 5] [--repeats 5]
 *       [--engine program|fp32|int8] [--verbose]
 *
 * program: the training engine's inference forward (nl-program.h); fp32
 * and int8: the inference executor (nl-infer-net.h). int8 calibrates its
 * table naively (min and max of every point over the generated batch,
 * seen through the fp32 executor's observe).
 *
 * Prints one JSON line: median images/s and the median latency of one
 * batch in milliseconds over the repeats. */
#include <glib.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph/nl-program.h"
#include "engine/infer/nl-infer-net.h"

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static void
die (const char *what, GError *error)
{
  g_printerr ("bench-infer: %s: %s\n", what, error ? error->message : "failed");
  exit (1);
}

/* One run observes each point once: its range goes straight in the table. */
static void
observe_range (const char *point, const float *v, int64_t n, gpointer table)
{
  float lo = G_MAXFLOAT, hi = -G_MAXFLOAT;
  for (int64_t i = 0; i < n; i++)
    {
      lo = MIN (lo, v[i]);
      hi = MAX (hi, v[i]);
    }
  nl_quant_table_add (table, point, lo, hi, MAX (MAX (fabsf (lo), fabsf (hi)), 1e-6f));
}

/* The naive table: one pass of the fp32 executor over x. */
static NlQuantTable *
naive_table (NlModel *model, int batch, const float *x)
{
  g_autoptr (GError) error = NULL;
  NlQuantTable *t = nl_quant_table_new (NL_QUANT_NAIVE, batch);
  NlInferOptions o = { .batch = batch, .mode = NL_INFER_FP32, .observe = observe_range, .observe_data = t };
  g_autoptr (NlInferNet) fp = nl_infer_net_new (model, &o, &error);
  if (!fp)
    die ("calibration", error);
  memcpy (nl_tensor_f32 (nl_infer_net_input (fp)), x, nl_tensor_numel (nl_infer_net_input (fp)) * sizeof (float));
  if (!nl_infer_net_run (fp, batch, &error))
    die ("calibration", error);
  return t;
}

typedef struct {
  NlProgram *prog;
  NlInferNet *net;
  int batch;
} Runner;

static void
run_once (Runner *r)
{
  g_autoptr (GError) error = NULL;
  if (r->prog ? !nl_program_forward (r->prog, 0, &error) : !nl_infer_net_run (r->net, r->batch, &error))
    die ("forward", error);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *network = NULL, *sample_s = g_strdup ("1,28,28");
  g_autofree char *engine = g_strdup ("program");
  gboolean verbose = FALSE;
  int batch = 128, iters = 50, warmup = 5, repeats = 5;
  GOptionEntry entries[] = {
    { "network", 0, 0, G_OPTION_ARG_FILENAME, &network, "network JSON", "FILE" },
    { "sample", 0, 0, G_OPTION_ARG_STRING, &sample_s, "sample shape (default 1,28,28)", "C,H,W" },
    { "batch", 0, 0, G_OPTION_ARG_INT, &batch, "batch size", "N" },
    { "iters", 0, 0, G_OPTION_ARG_INT, &iters, "timed batches per repeat", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &warmup, "untimed batches first", "N" },
    { "repeats", 0, 0, G_OPTION_ARG_INT, &repeats, "timed repeats (median reported)", "N" },
    { "engine", 0, 0, G_OPTION_ARG_STRING, &engine, "program (default), fp32 or int8", "ENGINE" },
    { "verbose", 0, 0, G_OPTION_ARG_NONE, &verbose, "print the executor's steps", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) oc = g_option_context_new ("- inference speed");
  g_option_context_add_main_entries (oc, entries, NULL);
  if (!g_option_context_parse (oc, &argc, &argv, &error) || !network)
    die ("options", error);
  g_autoptr (NlNetwork) net = nl_network_load_file (network, &error);
  if (!net)
    die (network, error);
  g_auto (GStrv) dims = g_strsplit (sample_s, ",", -1);
  NlShape sample = { 0 };
  sample.ndim = (int) g_strv_length (dims);
  for (int i = 0; i < sample.ndim; i++)
    sample.d[i] = g_ascii_strtoll (dims[i], NULL, 10);
  g_autoptr (NlModel) model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 1 }, &error);
  if (!model)
    die ("model", error);
  if (strcmp (engine, "program") && strcmp (engine, "fp32") && strcmp (engine, "int8"))
    die ("--engine", NULL);
  GRand *rand = g_rand_new_with_seed (7);
  int64_t numel = batch * nl_shape_numel (&sample);
  g_autofree float *x = g_new (float, numel);
  for (int64_t i = 0; i < numel; i++)
    x[i] = (float) g_rand_double_range (rand, -1, 2);
  g_rand_free (rand);
  Runner r = { .batch = batch };
  g_autoptr (NlQuantTable) table = NULL;
  NlTensor *input;
  if (strcmp (engine, "program") == 0)
    {
      NlCompileOptions opts = { .batch = batch, .training = FALSE };
      if (!(r.prog = nl_program_new (model, &opts, &error)))
        die ("program", error);
      input = nl_program_input (r.prog);
    }
  else
    {
      gboolean int8 = strcmp (engine, "int8") == 0;
      if (int8)
        table = naive_table (model, batch, x);
      NlInferOptions o = { .batch = batch, .mode = int8 ? NL_INFER_INT8 : NL_INFER_FP32, .quant = table };
      if (!(r.net = nl_infer_net_new (model, &o, &error)))
        die ("executor", error);
      input = nl_infer_net_input (r.net);
      for (const char *const *d = nl_infer_net_describe (r.net); verbose && *d; d++)
        g_printerr ("  %s\n", *d);
    }
  memcpy (nl_tensor_f32 (input), x, numel * sizeof (float));
  for (int i = 0; i < warmup; i++)
    run_once (&r);
  double *ips = g_new (double, repeats);
  for (int k = 0; k < repeats; k++)
    {
      gint64 t0 = g_get_monotonic_time ();
      for (int i = 0; i < iters; i++)
        run_once (&r);
      ips[k] = (double) iters * batch / ((g_get_monotonic_time () - t0) / 1e6);
    }
  qsort (ips, repeats, sizeof (double), cmp_double);
  double med = ips[repeats / 2];
  printf ("{\"impl\":\"netloom\",\"engine\":\"%s\",\"network\":\"%s\",\"batch\":%d,\"images_per_s\":%.1f,"
          "\"latency_ms\":%.4f}\n",
          engine, net->name ? net->name : network, batch, med, 1000.0 * batch / med);
  g_free (ips);
  g_clear_pointer (&r.prog, nl_program_free);
  g_clear_pointer (&r.net, nl_infer_net_free);
  return 0;
}
