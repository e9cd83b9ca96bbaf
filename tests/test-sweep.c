/* test-sweep.c — sweeps in the engine: the search space (parsing, errors
 * naming the key, network parameters, applying a point), the exact grid,
 * random and TPE reproducible per seed, TPE finding the good region of a
 * synthetic objective with a fake trainer, and ASHA's promotions against
 * a hand-worked example. */
#include "engine/sweep/nl-sweep-asha.h"
#include "engine/sweep/nl-sweep-sampler.h"
#include "engine/sweep/nl-sweep-space.h"
#include "engine/sweep/nl-sweep-strategy.h"

#include <math.h>
#include <string.h>

static NlNetwork *
load_mlp (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (g_getenv ("NETLOOM_SOURCE_DIR") ? g_getenv ("NETLOOM_SOURCE_DIR") : "..",
                                            "data", "networks", "mlp.json", NULL);
  NlNetwork *net = nl_network_load_file (path, &error);
  g_assert_no_error (error);
  return net;
}

static void
test_space_parse (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlSweepSpace) s
    = nl_sweep_space_parse ("lr=log:1e-4:1e-1,optimizer=sgd|adam,fc1.units=int:64:512,"
                            "augment=random-crop:28:4,flip|flip,momentum=uniform:0.5:0.99:5", &error);
  const NlSweepParam *p;

  g_assert_no_error (error);
  g_assert_cmpint (nl_sweep_space_dim (s), ==, 5);
  p = nl_sweep_space_param (s, 0);
  g_assert_cmpstr (p->key, ==, "lr");
  g_assert_cmpint (p->kind, ==, NL_SWEEP_LOG);
  g_assert_cmpfloat (p->lo, ==, 1e-4);
  g_assert_cmpfloat (p->hi, ==, 1e-1);
  g_assert_true (p->field == nl_run_config_find_field ("lr"));
  p = nl_sweep_space_param (s, 1);
  g_assert_cmpint (p->kind, ==, NL_SWEEP_CHOICE);
  g_assert_cmpint (p->n_choices, ==, 2);
  g_assert_cmpstr (p->choices[1], ==, "adam");
  p = nl_sweep_space_param (s, 2);
  g_assert_cmpint (p->kind, ==, NL_SWEEP_INT);
  g_assert_null (p->field);
  g_assert_cmpstr (p->node, ==, "fc1");
  g_assert_cmpstr (p->param, ==, "units");
  /* a value's own commas stay in it */
  p = nl_sweep_space_param (s, 3);
  g_assert_cmpint (p->n_choices, ==, 2);
  g_assert_cmpstr (p->choices[0], ==, "random-crop:28:4,flip");
  g_assert_cmpint (nl_sweep_space_param (s, 4)->grid, ==, 5);
}

/* Each bad space is refused with one message naming the key. */
static void
test_space_errors (void)
{
  static const struct {
    const char *space, *message;
  } cases[] = {
    { "learning_rate=log:1e-4:1e-1", "--space: learning_rate: unknown setting" },
    { "lr=log:0:1e-1", "--space: lr: a log range needs LO > 0, not 0" },
    { "lr=log:1e-1:1e-4", "--space: lr: the range log:1e-1:1e-4 is empty (LO > HI)" },
    { "lr=uniform:0.1", "--space: lr: 'uniform:0.1' is not uniform:LO:HI[:N]" },
    { "momentum=uniform:0.5:1.5", "--space: momentum: momentum must be in [0, 1), not 1.5" },
    { "optimizer=sgd|adamx", "--space: optimizer: unknown optimizer 'adamx'" },
    { "optimizer=uniform:0:1", "--space: optimizer: takes a choice list (a|b|c), not a range" },
    { "epochs=int:1.5:3", "--space: epochs: an int range needs integer ends" },
    { "batch_size=64||128", "--space: batch_size: an empty choice" },
    { "lr=0.1,lr=0.2", "--space: lr: given twice" },
    { "dataset=mnist|cifar10", "--space: dataset: unknown setting" },
    { "lr", "--space: 'lr' is not KEY=VALUES" },
    { "precision=fp8", "--space: precision: precision must be fp32, bf16 or fp16, not 'fp8'" },
    { "lr_schedule=cosine|wobble", "--space: lr_schedule:" },
    { "augment=flip|twirl:3", "--space: augment: " },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (NlSweepSpace) s = nl_sweep_space_parse (cases[i].space, &error);
      g_assert_null (s);
      g_assert_nonnull (error);
      if (!g_str_has_prefix (error->message, cases[i].message))
        g_error ("%s: got '%s', want '%s...'", cases[i].space, error->message, cases[i].message);
    }
}

static void
test_space_network (void)
{
  g_autoptr (NlNetwork) net = load_mlp ();
  static const struct {
    const char *space, *message;
  } cases[] = {
    { "fc9.units=int:64:512", "--space: fc9.units: the network mlp has no node 'fc9'" },
    { "fc1.rate=0.5", "--space: fc1.rate: node fc1 (Dense) has no parameter 'rate'" },
    { "fc1.units=int:0:512", "--space: fc1.units:" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (NlSweepSpace) s = nl_sweep_space_parse (cases[i].space, &error);
      g_assert_no_error (error);
      g_assert_false (nl_sweep_space_check_network (s, net, &error));
      if (!g_str_has_prefix (error->message, cases[i].message))
        g_error ("%s: got '%s', want '%s...'", cases[i].space, error->message, cases[i].message);
    }
}

static void
test_space_apply (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = load_mlp ();
  /* lr before optimizer in the text: the optimizer's defaults must not undo it */
  g_autoptr (NlSweepSpace) s = nl_sweep_space_parse ("lr=log:1e-4:1e-1,optimizer=sgd|adam,fc1.units=int:64:512,"
                                                     "batch_size=32|64", &error);
  g_auto (NlRunConfig) rc = { 0 };
  double point[] = { 0.003, 1, 100, 1 }, back[4];
  g_autofree char *json = NULL, *text = NULL;
  int node = nl_network_find (net, "fc1");

  g_assert_no_error (error);
  g_assert_true (nl_sweep_space_check_network (s, net, &error));
  nl_run_config_init (&rc);
  g_assert_true (nl_sweep_space_apply (s, point, &rc, net, &error));
  g_assert_no_error (error);
  g_assert_cmpint (rc.optim.kind, ==, NL_OPTIM_ADAM);
  g_assert_cmpfloat_with_epsilon (rc.optim.lr, 0.003, 1e-9);
  g_assert_cmpfloat (rc.optim.beta2, ==, 0.999f);   /* adam's own default */
  g_assert_cmpint (rc.batch_size, ==, 64);
  g_assert_cmpint (nl_network_node (net, node)->params[0].i, ==, 100);
  json = nl_sweep_space_point_to_json (s, point);
  g_assert_cmpstr (json, ==, "{\"lr\":0.0030000000000000001,\"optimizer\":\"adam\",\"fc1.units\":100,"
                             "\"batch_size\":\"64\"}");
  g_assert_true (nl_sweep_space_point_from_json (s, json, back, &error));
  g_assert_cmpmem (back, sizeof back, point, sizeof point);
  text = nl_sweep_space_point_describe (s, point);
  g_assert_cmpstr (text, ==, "lr=0.003 optimizer=adam fc1.units=100 batch_size=64");
}

/* The schedule and the augmentation vary as choice lists of their specs
 * (commas inside a transform list stay its own), which the GUI's Sweep…
 * dialog offers too. */
static void
test_space_schedule_augment (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlSweepSpace) s = nl_sweep_space_parse ("lr_schedule=constant|cosine+warmup:10,"
                                                     "augment=flip|random-crop:28:4,flip", &error);
  g_auto (NlRunConfig) rc = { 0 };
  double point[] = { 1, 1 }, back[2];
  g_autofree char *json = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (nl_sweep_space_dim (s), ==, 2);
  g_assert_cmpint (nl_sweep_space_param (s, 0)->kind, ==, NL_SWEEP_CHOICE);
  g_assert_cmpint (nl_sweep_space_param (s, 1)->n_choices, ==, 2);
  nl_run_config_init (&rc);
  g_assert_true (nl_sweep_space_apply (s, point, &rc, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (rc.lr_schedule, ==, "cosine+warmup:10");
  g_assert_cmpstr (rc.augment, ==, "random-crop:28:4,flip");
  point[0] = 0;
  point[1] = 0;
  g_assert_true (nl_sweep_space_apply (s, point, &rc, NULL, &error));
  g_assert_cmpstr (rc.lr_schedule, ==, "constant");
  g_assert_cmpstr (rc.augment, ==, "flip");
  point[1] = 1;
  json = nl_sweep_space_point_to_json (s, point);
  g_assert_cmpstr (json, ==, "{\"lr_schedule\":\"constant\",\"augment\":\"random-crop:28:4,flip\"}");
  g_assert_true (nl_sweep_space_point_from_json (s, json, back, &error));
  g_assert_cmpmem (back, sizeof back, point, sizeof point);
}

/* The grid in full: 2 x 3 x 2, the last key fastest, log steps geometric,
 * an int range no longer than its integers. */
static void
test_grid (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlSweepSpace) s = nl_sweep_space_parse ("optimizer=sgd|adam,lr=log:1e-3:1e-1,epochs=int:1:2", &error);
  static const double want[12][3] = {
    { 0, 1e-3, 1 }, { 0, 1e-3, 2 }, { 0, 1e-2, 1 }, { 0, 1e-2, 2 }, { 0, 1e-1, 1 }, { 0, 1e-1, 2 },
    { 1, 1e-3, 1 }, { 1, 1e-3, 2 }, { 1, 1e-2, 1 }, { 1, 1e-2, 2 }, { 1, 1e-1, 1 }, { 1, 1e-1, 2 },
  };
  g_autoptr (NlSweepSpace) wide = nl_sweep_space_parse ("fc1.units=int:64:512:4,momentum=uniform:0:0.9:4", &error);
  static const double units[] = { 64, 213, 363, 512 }, momenta[] = { 0, 0.3, 0.6, 0.9 };

  g_assert_no_error (error);
  g_assert_cmpint (nl_sweep_grid_size (s), ==, 12);
  for (int i = 0; i < 12; i++)
    {
      double pt[3];
      nl_sweep_grid_point (s, i, pt);
      g_assert_cmpfloat (pt[0], ==, want[i][0]);
      g_assert_cmpfloat_with_epsilon (pt[1], want[i][1], 1e-12);
      g_assert_cmpfloat (pt[2], ==, want[i][2]);
    }
  g_assert_cmpint (nl_sweep_grid_size (wide), ==, 16);
  for (int i = 0; i < 16; i++)
    {
      double pt[2];
      nl_sweep_grid_point (wide, i, pt);
      g_assert_cmpfloat (pt[0], ==, units[i / 4]);
      g_assert_cmpfloat_with_epsilon (pt[1], momenta[i % 4], 1e-12);
    }
}

static void
test_random (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlSweepSpace) s = nl_sweep_space_parse ("lr=log:1e-4:1e-1,optimizer=sgd|adam|nag,units.x=int:64:66,"
                                                     "momentum=uniform:0.5:0.9", &error);
  int seen_int[3] = { 0 }, seen_choice[3] = { 0 }, differ = 0;

  g_assert_no_error (error);
  for (int t = 0; t < 200; t++)
    {
      double a[4], b[4], c[4];
      nl_sweep_random_point (s, 42, t, a);
      nl_sweep_random_point (s, 42, t, b);
      nl_sweep_random_point (s, 43, t, c);
      g_assert_cmpmem (a, sizeof a, b, sizeof b);
      differ += memcmp (a, c, sizeof a) != 0;
      g_assert_cmpfloat (a[0], >=, 1e-4);
      g_assert_cmpfloat (a[0], <=, 1e-1);
      g_assert_cmpfloat (a[2], ==, floor (a[2]));
      seen_int[(int) a[2] - 64]++;
      seen_choice[(int) a[1]]++;
      g_assert_cmpfloat (a[3], >=, 0.5);
      g_assert_cmpfloat (a[3], <=, 0.9);
    }
  g_assert_cmpint (differ, ==, 200);
  /* every end of an int range and every choice turns up */
  for (int k = 0; k < 3; k++)
    {
      g_assert_cmpint (seen_int[k], >, 30);
      g_assert_cmpint (seen_choice[k], >, 30);
    }
}

/* A synthetic objective: best at lr = 1e-2, momentum = 0.9, choice 2 of 4. */
static double
objective (const double *p)
{
  double d = log10 (p[0]) + 2;
  return 1 - d * d - 2 * (p[1] - 0.9) * (p[1] - 0.9) - (p[2] == 2 ? 0 : 0.3);
}

/* The fake trainer: N trials, each scored by the objective at once.
 * Returns how many of the last half fell in the good region. */
static int
fake_sweep (const NlSweepStrategy *strategy, const NlSweepSpace *s, guint64 seed, int n, double *points,
            double *values)
{
  int good = 0;
  for (int t = 0; t < n; t++)
    {
      NlSweepHistory h = { points, values, t, TRUE };
      double *pt = points + t * 3;
      strategy->sample (s, seed, t, &h, pt);
      values[t] = objective (pt);
      if (t >= n / 2 && fabs (log10 (pt[0]) + 2) < 0.5 && fabs (pt[1] - 0.9) < 0.15 && pt[2] == 2)
        good++;
    }
  return good;
}

static void
test_tpe (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlSweepSpace) s = nl_sweep_space_parse ("lr=log:1e-5:1,momentum=uniform:0:0.99,relu1.act=a|b|c|d", &error);
  enum { N = 60 };
  double pa[N * 3], va[N], pb[N * 3], vb[N];
  int tpe_good = 0, random_good = 0;
  const NlSweepStrategy *tpe = nl_sweep_strategy_lookup ("tpe", NULL);
  const NlSweepStrategy *rand_strategy = nl_sweep_strategy_lookup ("random", NULL);

  g_assert_no_error (error);
  /* the same seed draws the same trials, history and all */
  fake_sweep (tpe, s, 7, N, pa, va);
  fake_sweep (tpe, s, 7, N, pb, vb);
  g_assert_cmpmem (pa, sizeof pa, pb, sizeof pb);
  fake_sweep (tpe, s, 8, N, pb, vb);
  g_assert_true (memcmp (pa + 3 * NL_SWEEP_TPE_STARTUP, pb + 3 * NL_SWEEP_TPE_STARTUP,
                         sizeof pa - 3 * NL_SWEEP_TPE_STARTUP * sizeof (double)) != 0);
  /* before NL_SWEEP_TPE_STARTUP values exist it is the random sampler */
  for (int t = 0; t < NL_SWEEP_TPE_STARTUP; t++)
    {
      double r[3];
      nl_sweep_random_point (s, 7, t, r);
      g_assert_cmpmem (r, sizeof r, pa + 3 * t, sizeof r);
    }
  /* over several seeds, TPE's later trials sit in the good region far more
   * often than random ones */
  for (guint64 seed = 1; seed <= 5; seed++)
    {
      tpe_good += fake_sweep (tpe, s, seed, N, pa, va);
      random_good += fake_sweep (rand_strategy, s, seed, N, pb, vb);
    }
  g_test_message ("good region, trials 30-59 of 5 sweeps: tpe %d, random %d", tpe_good, random_good);
  g_assert_cmpint (tpe_good, >=, 3 * MAX (random_good, 1));
  g_assert_cmpint (tpe_good, >=, 5 * N / 2 / 4);
}

/* Hand-worked: eta 3, min 1 epoch, 9 epochs: rungs after epochs 1 and 3.
 * A value continues when it is at least the (n/3)-th best of the n values
 * at its rung, its own included (the best while n < 3). */
static void
test_asha (void)
{
  g_autoptr (NlAsha) a = nl_asha_new (3, 1, 9, TRUE);
  g_autoptr (NlAsha) m = nl_asha_new (2, 2, 16, FALSE);
  g_autoptr (GError) error = NULL;
  int eta, min_epochs;
  static const struct {
    int epoch;
    double value;
    gboolean pruned;
  } steps[] = {
    { 1, 0.50, FALSE },   /* n=1: the best */
    { 1, 0.40, TRUE },    /* n=2: not the best (0.50) */
    { 1, 0.60, FALSE },   /* n=3, k=0: the best */
    { 2, 0.10, FALSE },   /* epoch 2 is no rung */
    { 1, 0.55, TRUE },    /* n=4, k=0: 0.60 is better */
    { 1, 0.58, TRUE },    /* n=5, k=0 */
    { 1, 0.59, FALSE },   /* n=6, k=1: the 2nd best of 6 (0.60, 0.59) */
    { 1, 0.45, TRUE },    /* n=7, k=1: 2nd best is 0.59 */
    { 3, 0.70, FALSE },   /* rung 1, n=1 */
    { 3, 0.65, TRUE },    /* rung 1, n=2 */
    { 9, 0.01, FALSE },   /* the last epoch is no rung */
  };

  g_assert_cmpint (nl_asha_rung (a, 1), ==, 0);
  g_assert_cmpint (nl_asha_rung (a, 3), ==, 1);
  g_assert_cmpint (nl_asha_rung (a, 2), ==, -1);
  g_assert_cmpint (nl_asha_rung (a, 9), ==, -1);
  for (gsize i = 0; i < G_N_ELEMENTS (steps); i++)
    if (nl_asha_report (a, steps[i].epoch, steps[i].value) != steps[i].pruned)
      g_error ("step %zu (epoch %d, %g): want %s", i, steps[i].epoch, steps[i].value,
               steps[i].pruned ? "pruned" : "promoted");
  /* NaN is pruned and never recorded */
  g_assert_true (nl_asha_report (a, 1, NAN));
  /* minimizing, eta 2, rungs after 2, 4 and 8 of 16 epochs */
  g_assert_cmpint (nl_asha_rung (m, 8), ==, 2);
  g_assert_cmpint (nl_asha_rung (m, 16), ==, -1);
  g_assert_false (nl_asha_report (m, 2, 1.0));   /* n=1 */
  g_assert_false (nl_asha_report (m, 2, 0.8));   /* n=2, k=0: best */
  g_assert_true (nl_asha_report (m, 2, 0.9));    /* n=3, k=0: 0.8 is lower */
  g_assert_false (nl_asha_report (m, 2, 0.85));  /* n=4, k=1: 2nd lowest of 0.8, 0.85, 0.9, 1.0 */
  /* a rung rebuilt from stored values decides as the live one did */
  nl_asha_record (m, 1, 0.3);
  g_assert_true (nl_asha_promotable (m, 1, 0.3));

  g_assert_true (nl_asha_parse ("asha", &eta, &min_epochs, &error));
  g_assert_cmpint (eta, ==, 3);
  g_assert_cmpint (min_epochs, ==, 1);
  g_assert_true (nl_asha_parse ("asha:eta=4,min_epochs=2", &eta, &min_epochs, &error));
  g_assert_cmpint (eta, ==, 4);
  g_assert_cmpint (min_epochs, ==, 2);
  g_assert_false (nl_asha_parse ("asha:eta=1", &eta, &min_epochs, &error));
  g_assert_cmpstr (error->message, ==, "--prune: 'eta=1' is not eta=N (2 to 100) or min_epochs=N (at least 1)");
  g_clear_error (&error);
  g_assert_false (nl_asha_parse ("hyperband", &eta, &min_epochs, &error));
  g_assert_cmpstr (error->message, ==, "--prune must be asha[:eta=3,min_epochs=1], not 'hyperband'");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sweep/space/parse", test_space_parse);
  g_test_add_func ("/sweep/space/errors", test_space_errors);
  g_test_add_func ("/sweep/space/network", test_space_network);
  g_test_add_func ("/sweep/space/apply", test_space_apply);
  g_test_add_func ("/sweep/space/schedule-augment", test_space_schedule_augment);
  g_test_add_func ("/sweep/grid", test_grid);
  g_test_add_func ("/sweep/random", test_random);
  g_test_add_func ("/sweep/tpe", test_tpe);
  g_test_add_func ("/sweep/asha", test_asha);
  return g_test_run ();
}
