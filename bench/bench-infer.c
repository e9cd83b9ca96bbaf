/* bench-infer.c — inference speed of a network (no backward, no optimizer)
 * on generated data, to compare with bench/torch_infer.py.
 *
 *   build/bench/bench-infer --network data/networks/lenet.json
 *       [--sample 1,28,28] [--batch 128] [--iters 50] [--warmup 5] [--repeats 5]
 *
 * Prints one JSON line: median images/s and the median latency of one
 * batch in milliseconds over the repeats. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/graph/nl-program.h"

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

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *network = NULL, *sample_s = g_strdup ("1,28,28");
  int batch = 128, iters = 50, warmup = 5, repeats = 5;
  GOptionEntry entries[] = {
    { "network", 0, 0, G_OPTION_ARG_FILENAME, &network, "network JSON", "FILE" },
    { "sample", 0, 0, G_OPTION_ARG_STRING, &sample_s, "sample shape (default 1,28,28)", "C,H,W" },
    { "batch", 0, 0, G_OPTION_ARG_INT, &batch, "batch size", "N" },
    { "iters", 0, 0, G_OPTION_ARG_INT, &iters, "timed batches per repeat", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &warmup, "untimed batches first", "N" },
    { "repeats", 0, 0, G_OPTION_ARG_INT, &repeats, "timed repeats (median reported)", "N" },
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
  NlCompileOptions opts = { .batch = batch, .training = FALSE };
  g_autoptr (NlProgram) prog = nl_program_new (model, &opts, &error);
  if (!prog)
    die ("program", error);
  GRand *rand = g_rand_new_with_seed (7);
  float *x = nl_tensor_f32 (nl_program_input (prog));
  for (int64_t i = 0; i < nl_tensor_numel (nl_program_input (prog)); i++)
    x[i] = (float) g_rand_double_range (rand, -1, 2);
  g_rand_free (rand);
  for (int i = 0; i < warmup; i++)
    if (!nl_program_forward (prog, 0, &error))
      die ("forward", error);
  double *ips = g_new (double, repeats);
  for (int r = 0; r < repeats; r++)
    {
      gint64 t0 = g_get_monotonic_time ();
      for (int i = 0; i < iters; i++)
        if (!nl_program_forward (prog, 0, &error))
          die ("forward", error);
      ips[r] = (double) iters * batch / ((g_get_monotonic_time () - t0) / 1e6);
    }
  qsort (ips, repeats, sizeof (double), cmp_double);
  double med = ips[repeats / 2];
  printf ("{\"impl\":\"netloom\",\"engine\":\"program\",\"network\":\"%s\",\"batch\":%d,\"images_per_s\":%.1f,"
          "\"latency_ms\":%.4f}\n",
          net->name ? net->name : network, batch, med, 1000.0 * batch / med);
  g_free (ips);
  return 0;
}
