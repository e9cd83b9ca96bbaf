/* bench-arith.c — forward and backward times of Mul and Sub (ops/cpu/arith.c)
 * with a constant operand broadcast over an 8x64x56x56 input (per channel,
 * a row, a middle block, a scalar), with one of per-feature shape over a
 * Dense-like 1024x512, and of two inputs (the contiguous loop) for scale.
 *
 *   build/bench/bench-arith [threads] [runs]
 *
 * Each figure is the median over `runs` (default 15) blocks of a few calls;
 * other load on the machine moves the median less than the mean. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/nl-threads.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

static double
now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* The median over runs blocks of reps calls, in ms per call. */
static double
median_ms (NlOpInstance *inst, gboolean backward, int runs, int reps)
{
  double *t = g_new (double, runs), m;
  for (int r = -1; r < runs; r++) /* r = -1: warm-up */
    {
      double t0 = now ();
      for (int i = 0; i < reps; i++)
        if (!(backward ? nl_op_instance_backward (inst, NULL) : nl_op_instance_forward (inst, NULL)))
          g_error ("%s failed", inst->def->name);
      if (r >= 0)
        t[r] = (now () - t0) / reps * 1e3;
    }
  qsort (t, runs, sizeof *t, cmp_double);
  m = t[runs / 2];
  g_free (t);
  return m;
}

int
main (int argc, char **argv)
{
  static const struct {
    const char *op, *operand, *what;
    int n_data;
    NlShape in;
  } cases[] = {
    { "Mul", "[64, 1, 1]", "per channel", 1, { 4, { 8, 64, 56, 56 } } },
    { "Sub", "[64, 1, 1]", "per channel", 1, { 4, { 8, 64, 56, 56 } } },
    { "Mul", "[1, 56]", "row [1, 56]", 1, { 4, { 8, 64, 56, 56 } } },
    { "Mul", "[1, 5]", "row [1, 5]", 1, { 4, { 8, 64, 56, 5 } } },
    { "Mul", "[64, 1, 56]", "middle [64, 1, 56]", 1, { 4, { 8, 64, 56, 56 } } },
    { "Mul", "[1]", "scalar", 1, { 4, { 8, 64, 56, 56 } } },
    { "Mul", "[512]", "per feature [512]", 1, { 2, { 1024, 512 } } },
    { "Mul", NULL, "two inputs", 2, { 4, { 8, 64, 56, 56 } } },
  };
  int threads = argc > 1 ? atoi (argv[1]) : 1, runs = argc > 2 ? MAX (1, atoi (argv[2])) : 15;

  nl_threads_set (threads);
  printf ("threads %d, median of %d runs, ms per call\n", threads, runs);
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr (GError) error = NULL;
      const char *params[] = { "operand_shape", cases[c].operand, NULL };
      NlShape in[2] = { cases[c].in, cases[c].in };
      NlOpInstance *inst = nl_op_instance_new (nl_op_lookup (cases[c].op), cases[c].operand ? params : NULL,
                                               cases[c].n_data, in, TRUE, &error);
      int64_t n;
      if (!inst)
        g_error ("%s", error->message);
      n = nl_tensor_numel (inst->out[0]);
      for (int64_t i = 0; i < n; i++)
        nl_tensor_f32 (inst->in[0])[i] = nl_tensor_f32 (inst->out_grad[0])[i] = (float) (i % 97) * 0.01f;
      printf ("  %-3s %-22s forward %7.3f  backward %7.3f\n", cases[c].op, cases[c].what,
              median_ms (inst, FALSE, runs, 5), median_ms (inst, TRUE, runs, 5));
      nl_op_instance_free (inst);
    }
  return 0;
}
