/* bench-resnet20.c — training speed of a ResNet-20 (CIFAR-sized, 3x32x32,
 * 10 classes; bench/resnet20.json) on generated data, to compare with
 * bench/torch_resnet20.py, which trains the same network the same way.
 *
 *   build/bench/bench-resnet20 [--device cuda:0] [--batch 128]
 *       [--precision fp32|bf16|fp16] [--steps 50] [--warmup 10] [--repeats 5]
 *
 * SGD, momentum 0.9, weight decay 5e-4, lr 0.1; one step is forward,
 * backward and update, and the loss is read back every step (what the
 * trainer does, and what PyTorch's loss.item() costs there too). Prints one
 * JSON line: the median images/s over the repeats and every repeat. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/nl-device.h"
#include "engine/graph/nl-program.h"
#include "engine/train/nl-loss-scale.h"
#include "engine/train/nl-optim.h"

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static gboolean
run_steps (NlProgram *p, const NlOptimConfig *optim, int n, int64_t *t, GError **error)
{
  for (int i = 0; i < n; i++)
    {
      ++*t;
      if (!nl_program_forward (p, (guint64) *t, error) || !nl_program_backward (p, error)
          || !nl_program_update (p, optim, optim->lr, *t, error))
        return FALSE;
    }
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *device_s = g_strdup ("cpu"), *precision_s = g_strdup ("fp32"), *network = NULL;
  int batch = 128, steps = 50, warmup = 10, repeats = 5;
  GOptionEntry entries[] = {
    { "device", 0, 0, G_OPTION_ARG_STRING, &device_s, "cpu or cuda:N", "DEV" },
    { "precision", 0, 0, G_OPTION_ARG_STRING, &precision_s, "fp32, bf16 or fp16", "P" },
    { "batch", 0, 0, G_OPTION_ARG_INT, &batch, "batch size", "N" },
    { "steps", 0, 0, G_OPTION_ARG_INT, &steps, "timed steps per repeat", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &warmup, "untimed steps first", "N" },
    { "repeats", 0, 0, G_OPTION_ARG_INT, &repeats, "timed repeats (median reported)", "N" },
    { "network", 0, 0, G_OPTION_ARG_FILENAME, &network, "network JSON (default bench/resnet20.json)", "FILE" },
    { NULL },
  };
  g_autoptr (GOptionContext) oc = g_option_context_new ("- ResNet-20 training speed");
  g_option_context_add_main_entries (oc, entries, NULL);
  if (!g_option_context_parse (oc, &argc, &argv, &error))
    {
      g_printerr ("bench-resnet20: %s\n", error->message);
      return 2;
    }
  NlDevice device;
  NlPrecision precision;
  if (!nl_precision_parse (precision_s, &precision))
    {
      g_printerr ("bench-resnet20: --precision: '%s' is not fp32, bf16 or fp16\n", precision_s);
      return 2;
    }
  if (!nl_device_parse (device_s, &device, &error) || !nl_device_check (device, &error))
    {
      g_printerr ("bench-resnet20: %s\n", error->message);
      return 1;
    }
  if (!network)
    network = g_build_filename (g_getenv ("NETLOOM_SOURCE_DIR") ? g_getenv ("NETLOOM_SOURCE_DIR") : ".", "bench",
                                "resnet20.json", NULL);
  g_autoptr (NlNetwork) net = nl_network_load_file (network, &error);
  if (!net)
    {
      g_printerr ("bench-resnet20: %s\n", error->message);
      return 1;
    }

  NlShape sample = nl_shape_of (3, (int64_t) 3, (int64_t) 32, (int64_t) 32);
  NlOptimConfig optim;
  nl_optim_config_init (&optim, NL_OPTIM_SGD);
  optim.lr = 0.1f;
  optim.momentum = 0.9f;
  optim.wd = 5e-4f;
  NlLossScale scaler;
  nl_loss_scale_init (&scaler, precision, 0);
  NlCompileOptions opts = { .batch = batch, .training = TRUE, .loss = "SoftmaxCrossEntropy", .device = device,
                            .precision = precision, .loss_scale = scaler.scale };
  g_autoptr (NlModel) model
    = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 1, .device = device, .optim = &optim }, &error);
  if (!model)
    {
      g_printerr ("bench-resnet20: %s\n", error->message);
      return 1;
    }
  g_autoptr (NlProgram) prog = nl_program_new (model, &opts, &error);
  if (!prog)
    {
      g_printerr ("bench-resnet20: %s\n", error->message);
      return 1;
    }
  /* generated data: normal-ish pixels, labels 0..9 */
  GRand *rand = g_rand_new_with_seed (7);
  float *x = nl_tensor_f32 (nl_program_input (prog)), *y = nl_tensor_f32 (nl_program_label (prog));
  for (int64_t i = 0; i < nl_tensor_numel (nl_program_input (prog)); i++)
    x[i] = (float) g_rand_double_range (rand, -2, 2);
  for (int i = 0; i < batch; i++)
    y[i] = (float) g_rand_int_range (rand, 0, 10);
  g_rand_free (rand);

  int64_t t = 0;
  if (!run_steps (prog, &optim, warmup, &t, &error))
    {
      g_printerr ("bench-resnet20: %s\n", error->message);
      return 1;
    }
  double *ips = g_new (double, repeats);
  for (int r = 0; r < repeats; r++)
    {
      gint64 t0 = g_get_monotonic_time ();
      if (!run_steps (prog, &optim, steps, &t, &error) || !nl_model_sync (model, &error))
        {
          g_printerr ("bench-resnet20: %s\n", error->message);
          return 1;
        }
      ips[r] = (double) steps * batch / ((g_get_monotonic_time () - t0) / 1e6);
    }
  g_autofree double *sorted = g_memdup2 (ips, sizeof (double) * repeats);
  qsort (sorted, repeats, sizeof (double), cmp_double);
  g_autoptr (GString) all = g_string_new (NULL);
  for (int r = 0; r < repeats; r++)
    g_string_append_printf (all, "%s%.1f", r ? "," : "", ips[r]);
  const float *loss = nl_tensor_f32 (nl_program_loss (prog));
  double mean_loss = 0;
  for (int i = 0; i < batch; i++)
    mean_loss += loss[i] / batch;
  printf ("{\"impl\":\"netloom\",\"network\":\"resnet20\",\"device\":\"%s\",\"batch\":%d,\"precision\":\"%s\","
          "\"steps\":%d,\"images_per_s\":%.1f,\"repeats\":[%s],\"last_loss\":%.4f,\"program_mib\":%.1f}\n",
          device_s, batch, precision_s, steps, sorted[repeats / 2], all->str, mean_loss,
          nl_program_bytes (prog) / 1048576.0);
  g_free (ips);
  return 0;
}
