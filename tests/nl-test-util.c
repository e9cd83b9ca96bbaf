/* nl-test-util.c — helpers shared by the test programs. */
#include "nl-test-util.h"
#include "core/cuda/nl-cuda.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

void
nl_test_fill_uniform (NlTensor *t, float lo, float hi, guint64 seed)
{
  GRand *r = g_rand_new_with_seed ((guint32) seed);
  float *p = nl_tensor_f32 (t);
  for (int64_t i = 0; i < nl_tensor_numel (t); i++)
    p[i] = lo + (hi - lo) * (float) g_rand_double (r);
  g_rand_free (r);
}

double
nl_test_close_ratio (const float *a, const float *b, int64_t n, double atol, double rtol)
{
  double worst = 0;
  for (int64_t i = 0; i < n; i++)
    {
      double r = fabs ((double) a[i] - b[i]) / (atol + rtol * fabs ((double) b[i]));
      if (!(r <= worst)) /* NaN counts as worst */
        worst = isnan (r) ? INFINITY : r;
    }
  return worst;
}

void
nl_test_assert_close_impl (const char *file, int line, const char *what,
                           const float *a, const float *b, int64_t n, double atol, double rtol)
{
  for (int64_t i = 0; i < n; i++)
    {
      double diff = fabs ((double) a[i] - b[i]);
      if (!(diff <= atol + rtol * fabs ((double) b[i])))
        {
          g_autofree char *msg = g_strdup_printf ("%s: element %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                                                  " is %.7g, expected %.7g (atol %g, rtol %g)",
                                                  what, i, n, a[i], b[i], atol, rtol);
          g_assertion_message (G_LOG_DOMAIN, file, line, "nl_test_assert_close", msg);
        }
    }
}

char *
nl_test_find_python (const char *modules)
{
  g_autofree char *on_path = g_find_program_in_path ("python3");
  g_autofree char *import = g_strconcat ("import ", modules, NULL);
  const char *candidates[] = { "/usr/bin/python3", on_path };

  for (gsize i = 0; i < G_N_ELEMENTS (candidates); i++)
    {
      const char *argv[] = { candidates[i], "-c", import, NULL };
      int status = -1;
      if (candidates[i] && g_file_test (candidates[i], G_FILE_TEST_IS_EXECUTABLE)
          && g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                           NULL, NULL, NULL, &status, NULL)
          && g_spawn_check_wait_status (status, NULL))
        return g_strdup (candidates[i]);
    }
  return NULL;
}

char *
nl_test_source_path (const char *rel)
{
  const char *root = g_getenv ("NETLOOM_SOURCE_DIR");
  return g_build_filename (root ? root : ".", rel, NULL);
}

void
nl_test_clear_dir (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  if (!d)
    return;
  while ((name = g_dir_read_name (d)))
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      if (g_file_test (p, G_FILE_TEST_IS_DIR) && !g_file_test (p, G_FILE_TEST_IS_SYMLINK))
        nl_test_remove_tree (p);
      else
        g_unlink (p);
    }
  g_dir_close (d);
}

void
nl_test_remove_tree (const char *dir)
{
  nl_test_clear_dir (dir);
  g_rmdir (dir);
}

NlNetwork *
nl_test_load_template (const char *name)
{
  g_autofree char *rel = g_strdup_printf ("data/networks/%s.json", name);
  g_autofree char *path = nl_test_source_path (rel);
  g_autoptr (GError) error = NULL;
  NlNetwork *net = nl_network_load_file (path, &error);
  g_assert_no_error (error);
  return net;
}

static void
write_idx (const char *dir, const char *name, gboolean images, int side, int n, guint32 seed)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GString) s = g_string_new (NULL);
  g_autoptr (GRand) r = g_rand_new_with_seed (seed);
  guint8 head[16] = { 0, 0, 8, images ? 3 : 1 };
  guint32 dims[3] = { GUINT32_TO_BE (n), GUINT32_TO_BE (side), GUINT32_TO_BE (side) };
  memcpy (head + 4, dims, images ? 12 : 4);
  g_string_append_len (s, (char *) head, images ? 16 : 8);
  for (int i = 0; i < n; i++)
    {
      int label = (i * 7 + 3) % 10;
      if (!images)
        {
          g_string_append_c (s, (char) label);
          continue;
        }
      for (int y = 0; y < side; y++)
        for (int x = 0; x < side; x++)
          g_string_append_c (s, (char) MIN (g_rand_int_range (r, 0, 200) + (y / 2 == label ? 60 : 0), 255));
    }
  g_assert_true (g_file_set_contents (path, s->str, s->len, NULL));
}

void
nl_test_write_idx_dataset_sized (const char *dir, int side, int n_train, int n_test)
{
  write_idx (dir, "train-images-idx3-ubyte", TRUE, side, n_train, 1);
  write_idx (dir, "train-labels-idx1-ubyte", FALSE, side, n_train, 1);
  write_idx (dir, "t10k-images-idx3-ubyte", TRUE, side, n_test, 2);
  write_idx (dir, "t10k-labels-idx1-ubyte", FALSE, side, n_test, 2);
}

void
nl_test_write_idx_dataset (const char *dir, int n_train, int n_test)
{
  nl_test_write_idx_dataset_sized (dir, NL_TEST_IDX_SIDE, n_train, n_test);
}

void
nl_test_tiny_train_config (NlRunConfig *cfg, const char *dataset)
{
  nl_run_config_init (cfg);
  nl_run_config_set_text (&cfg->dataset, dataset);
  cfg->epochs = 3;
  cfg->batch_size = 32;
  cfg->eval_batch_size = 100;
  cfg->optim.lr = 0.05f;
  cfg->workers = 0;
  cfg->seed = 5;
}

NlShape
nl_test_parse_shape (const char *s)
{
  g_auto (GStrv) parts = g_strsplit (s, "x", -1);
  NlShape shape = { .ndim = (int) g_strv_length (parts) };
  g_assert_cmpint (shape.ndim, <=, NL_MAX_DIMS);
  for (int i = 0; i < shape.ndim; i++)
    shape.d[i] = g_ascii_strtoll (parts[i], NULL, 10);
  return shape;
}

gboolean
nl_test_params_choose (const char *const *params, const NlParamSpec *s, int j)
{
  gboolean given = FALSE;
  for (int i = 0; params[i]; i += 2)
    if (strcmp (params[i], s->name) == 0)
      {
        given = TRUE;
        if (g_ascii_strcasecmp (params[i + 1], s->enum_values[j]) == 0)
          return TRUE;
      }
  return !given && (int) s->def == j;
}

void
nl_test_ok_or_die (gboolean ok, GError *error, const char *what)
{
  if (!ok)
    g_error ("%s failed: %s", what, error ? error->message : "(no error set)");
}

NlCudaCtx *
nl_test_cuda_open (char **reason)
{
  g_autoptr (GError) error = NULL;
  NlCudaCtx *cuda;

  if (nl_cuda_device_count (reason) <= 0)
    return NULL;
  cuda = nl_cuda_ctx (0, &error);
  if (cuda && nl_cuda_ctx_enter (cuda, &error))
    return cuda;
  g_free (*reason);
  *reason = g_strdup_printf ("cuda:0 is there, but its context failed: %s", error->message);
  return NULL;
}

gboolean
nl_test_need_cuda (NlCudaCtx *cuda, const char *reason)
{
  if (cuda)
    return TRUE;
  g_test_skip_printf ("no CUDA device: %s", reason);
  return FALSE;
}

NlNetwork *
nl_test_generated_network (int n)
{
  NlNetwork *net = nl_network_new ("generated");
  int prev = nl_network_add_node (net, "data", "Input", NULL), k = 0;

  while (nl_network_n_nodes (net) < n)
    {
      char id[32];
      int kind = k++ % 3;
      if (kind == 0)
        {
          g_snprintf (id, sizeof id, "fc%d", k);
          int d = nl_network_add_node (net, id, "Dense", NULL);
          g_assert_true (nl_network_connect (net, prev, 0, d, 0, NULL));
          prev = d;
        }
      else if (kind == 1)
        {
          int a, b, s;
          g_snprintf (id, sizeof id, "a%d", k);
          a = nl_network_add_node (net, id, "Dense", NULL);
          g_snprintf (id, sizeof id, "b%d", k);
          b = nl_network_add_node (net, id, "Activation", NULL);
          g_snprintf (id, sizeof id, "add%d", k);
          s = nl_network_add_node (net, id, "Add", NULL);
          g_assert_true (nl_network_connect (net, prev, 0, a, 0, NULL));
          g_assert_true (nl_network_connect (net, a, 0, b, 0, NULL));
          g_assert_true (nl_network_connect (net, prev, 0, s, 0, NULL));
          g_assert_true (nl_network_connect (net, b, 0, s, 1, NULL));
          prev = s;
        }
      else
        {
          int cat;
          g_snprintf (id, sizeof id, "cat%d", k);
          cat = nl_network_add_node (net, id, "Concat", NULL);
          for (int j = 0; j < 3; j++)
            {
              int d;
              g_snprintf (id, sizeof id, "br%d_%d", k, j);
              d = nl_network_add_node (net, id, "Dense", NULL);
              g_assert_true (nl_network_connect (net, prev, 0, d, 0, NULL));
              g_assert_true (nl_network_connect (net, d, 0, cat, j, NULL));
            }
          prev = cat;
        }
    }
  return net;
}

char *
nl_test_chain_network_json (int n)
{
  GString *s = g_string_new ("{\"format\":\"netloom.network\",\"version\":1,\"name\":\"chain\",\"nodes\":[\n"
                             "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"shape\":[16]},\"pos\":[0,0]}");
  g_assert_cmpint (n, >=, 3);
  for (int i = 1; i <= n - 2; i++)
    g_string_append_printf (s, ",\n{\"id\":\"a%d\",\"op\":\"Activation\",\"params\":{\"act_type\":\"relu\"},"
                            "\"pos\":[%d,%d]}", i, i % 97 * 40, i / 97 * 80);
  g_string_append (s, ",\n{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":10}}],\n\"edges\":[\"data -> a1\"");
  for (int i = 1; i < n - 2; i++)
    g_string_append_printf (s, ",\n\"a%d -> a%d\"", i, i + 1);
  g_string_append_printf (s, ",\n\"a%d -> fc\"]}\n", n - 2);
  return g_string_free (s, FALSE);
}
