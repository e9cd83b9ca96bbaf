/* test-tsne.c — t-SNE (nl-tsne.h) against independent references:
 *  - the affinities against a numpy implementation of the paper's
 *    perplexity search (in bits, as Hinton's code);
 *  - the KL divergence and its gradient against PyTorch autograd;
 *  - an embedding of three well-separated clusters keeps them apart and
 *    every point's nearest neighbours in its own cluster, with and without
 *    the PCA reduction to 50 dimensions. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "engine/session/nl-tsne.h"
#include "tests/nl-test-util.h"

static char *work_dir;

/* Runs /usr/bin/python3 -c script with args; its stdout as JSON. */
static JsonNode *
python_json (const char *script, const char *const *args)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *out = NULL, *err = NULL;
  int status;
  g_ptr_array_add (argv, (char *) "/usr/bin/python3");
  g_ptr_array_add (argv, (char *) "-c");
  g_ptr_array_add (argv, (char *) script);
  for (; *args; args++)
    g_ptr_array_add (argv, (char *) *args);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, 0, NULL, NULL, &out, &err, &status, &error));
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("python failed: %s", err);
  JsonNode *root = json_from_string (out, &error);
  g_assert_no_error (error);
  return root;
}

static char *
write_doubles (const char *name, const double *v, gsize n)
{
  g_autoptr (GError) error = NULL;
  char *path = g_build_filename (work_dir, name, NULL);
  g_assert_true (g_file_set_contents (path, (const char *) v, sizeof (double) * n, &error));
  return path;
}

/* Three clusters of `per` points in d dimensions, centres 10 apart, unit noise. */
static void
clusters (int per, int d, float *x, int *label)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (42);
  for (int i = 0; i < 3 * per; i++)
    {
      label[i] = i % 3;
      for (int k = 0; k < d; k++)
        {
          /* a sum of uniforms: near enough Gaussian */
          double noise = 0;
          for (int u = 0; u < 6; u++)
            noise += g_rand_double_range (rng, -1, 1);
          x[(gsize) i * d + k] = (float) ((k == label[i] ? 10.0 : 0.0) + noise / 2);
        }
    }
}

static const char *affinity_ref =
  "import sys, json, numpy as np\n"
  "n, d, perp = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])\n"
  "x = np.fromfile(sys.argv[1]).reshape(n, d)\n"
  "D = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)\n"
  "P = np.zeros((n, n))\n"
  "for i in range(n):\n"
  "    di = np.delete(D[i], i)\n"
  "    lo, hi = 0.0, np.inf; beta = 1.0\n"
  "    for _ in range(200):\n"
  "        w = np.exp(-(di - di.min()) * beta); p = w / w.sum()\n"
  "        h_bits = -(p[p > 0] * np.log2(p[p > 0])).sum()\n"
  "        if abs(h_bits - np.log2(perp)) < 1e-12: break\n"
  "        if h_bits > np.log2(perp): lo = beta; beta = beta * 2 if hi == np.inf else (beta + hi) / 2\n"
  "        else: hi = beta; beta = (beta + lo) / 2\n"
  "    P[i] = np.insert(p, i, 0.0)\n"
  "P = (P + P.T) / (2 * n)\n"
  "print(json.dumps(P.flatten().tolist()))\n";

static void
test_affinities (void)
{
  const int n = 40, d = 5;
  double x[40 * 5], p[40 * 40], sum = 0;
  g_autoptr (GRand) rng = g_rand_new_with_seed (7);
  g_autofree char *path = NULL;
  g_autoptr (JsonNode) ref = NULL;
  JsonArray *a;

  for (int k = 0; k < n * d; k++)
    x[k] = g_rand_double_range (rng, -2, 2);
  nl_tsne_affinities (x, n, d, 8.0, p);
  path = write_doubles ("x.f64", x, n * d);
  ref = python_json (affinity_ref, (const char *const[]) { path, "40", "5", "8", NULL });
  a = json_node_get_array (ref);
  for (int k = 0; k < n * n; k++)
    {
      double r = json_array_get_double_element (a, k);
      if (fabs (p[k] - r) > 1e-9 + 1e-6 * fabs (r))
        g_error ("P[%d]: %g, reference %g", k, p[k], r);
      sum += p[k];
    }
  g_assert_cmpfloat (fabs (sum - 1), <, 1e-12);
  for (int i = 0; i < n; i++)
    g_assert_cmpfloat (p[i * n + i], ==, 0);
}

static const char *kl_ref =
  "import sys, json, numpy as np, torch\n"
  "n = int(sys.argv[3])\n"
  "P = torch.from_numpy(np.fromfile(sys.argv[1]).reshape(n, n))\n"
  "Y = torch.from_numpy(np.fromfile(sys.argv[2]).reshape(n, 2)).requires_grad_(True)\n"
  "num = 1 / (1 + torch.cdist(Y, Y) ** 2)\n"
  "num = num * (1 - torch.eye(n, dtype=torch.float64))\n"
  "Q = num / num.sum()\n"
  "m = P > 0\n"
  "kl = (P[m] * torch.log(P[m] / Q[m])).sum()\n"
  "kl.backward()\n"
  "print(json.dumps({'kl': kl.item(), 'grad': Y.grad.flatten().tolist()}))\n";

static void
test_gradient (void)
{
  const int n = 30;
  double x[30 * 4], p[30 * 30], y[60], grad[60], kl;
  g_autoptr (GRand) rng = g_rand_new_with_seed (9);
  g_autofree char *pp = NULL, *yp = NULL;
  g_autoptr (JsonNode) ref = NULL;
  JsonObject *o;
  JsonArray *g;

  for (int k = 0; k < n * 4; k++)
    x[k] = g_rand_double_range (rng, -1, 1);
  for (int k = 0; k < 2 * n; k++)
    y[k] = g_rand_double_range (rng, -3, 3);
  nl_tsne_affinities (x, n, 4, 5.0, p);
  kl = nl_tsne_kl_gradient (p, y, n, grad);
  pp = write_doubles ("p.f64", p, n * n);
  yp = write_doubles ("y.f64", y, 2 * n);
  ref = python_json (kl_ref, (const char *const[]) { pp, yp, "30", NULL });
  o = json_node_get_object (ref);
  /* the kernel is kept in single precision */
  g_assert_cmpfloat (fabs (kl - json_object_get_double_member (o, "kl")), <, 1e-6 * fabs (kl));
  g = json_object_get_array_member (o, "grad");
  for (int k = 0; k < 2 * n; k++)
    {
      double r = json_array_get_double_element (g, k);
      if (fabs (grad[k] - r) > 1e-9 + 1e-6 * fabs (r))
        g_error ("gradient[%d]: %g, autograd %g", k, grad[k], r);
    }
}

/* Every point's 5 nearest neighbours in the embedding share its cluster,
 * and the clusters' centres are far apart against their spread. */
static void
check_clusters (int d)
{
  const int per = 60, n = 3 * per;
  g_autofree float *x = g_new (float, (gsize) n * d), *xy = g_new (float, 2 * n);
  int label[180];
  double cx[3] = { 0 }, cy[3] = { 0 }, spread = 0, gap = INFINITY;

  clusters (per, d, x, label);
  nl_tsne_embed (x, n, d, 20, 1000, xy);
  for (int i = 0; i < n; i++)
    {
      double best[5] = { INFINITY, INFINITY, INFINITY, INFINITY, INFINITY };
      int who[5] = { -1, -1, -1, -1, -1 };
      g_assert_true (isfinite (xy[2 * i]) && isfinite (xy[2 * i + 1]));
      for (int j = 0; j < n; j++)
        {
          double dd = pow (xy[2 * i] - xy[2 * j], 2) + pow (xy[2 * i + 1] - xy[2 * j + 1], 2);
          if (j == i || dd >= best[4])
            continue;
          int k = 4;
          for (; k > 0 && best[k - 1] > dd; k--)
            {
              best[k] = best[k - 1];
              who[k] = who[k - 1];
            }
          best[k] = dd;
          who[k] = j;
        }
      for (int k = 0; k < 5; k++)
        g_assert_cmpint (label[who[k]], ==, label[i]);
      cx[label[i]] += xy[2 * i] / per;
      cy[label[i]] += xy[2 * i + 1] / per;
    }
  for (int i = 0; i < n; i++)
    spread = MAX (spread, hypot (xy[2 * i] - cx[label[i]], xy[2 * i + 1] - cy[label[i]]));
  for (int a = 0; a < 3; a++)
    for (int b = a + 1; b < 3; b++)
      gap = MIN (gap, hypot (cx[a] - cx[b], cy[a] - cy[b]));
  g_test_message ("%d dimensions: cluster radius %.2f, closest centres %.2f apart", d, spread, gap);
  g_assert_cmpfloat (gap, >, 2 * spread);
}

static void
test_clusters (void)
{
  check_clusters (20);   /* as they are */
  check_clusters (120);  /* through the PCA reduction to 50 */
}

int
main (int argc, char **argv)
{
  int status;
  g_test_init (&argc, &argv, NULL);
  work_dir = g_dir_make_tmp ("netloom-tsne-XXXXXX", NULL);
  g_test_add_func ("/tsne/affinities", test_affinities);
  g_test_add_func ("/tsne/gradient", test_gradient);
  g_test_add_func ("/tsne/clusters", test_clusters);
  status = g_test_run ();
  nl_test_remove_tree (work_dir);
  g_free (work_dir);
  return status;
}
