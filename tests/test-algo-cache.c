/* test-algo-cache.c — cuDNN's autotune cache (core/nl-algo-cache.h) without
 * a GPU: the file's round trip, the key's components, two processes writing
 * at once, damaged files, a cache folder that cannot be written. */
#include "core/nl-algo-cache.h"
#include "nl-test-util.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const NlAlgoKey base_key = { "NVIDIA H200", 90100, NL_ALGO_OP_FWD,
                                    "x128x64x32x32 w64x64x3x3 p1 s1 d1 g1 f32 acc-f32", FALSE };

static char *
temp_dir (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("nl-algo-cache-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static void
test_round_trip (void)
{
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = g_build_filename (dir, "sub", "cudnn-algos.txt", NULL);
  NlAlgoChoice ch = { 6, 1, 123456789012ULL, 0.3125 }, got;
  NlAlgoKey k2 = base_key;
  k2.device = "odd\tname\nwith \\ escapes \xc3\xa9";
  {
    g_autoptr (NlAlgoCache) c = nl_algo_cache_new (path);
    g_assert_false (nl_algo_cache_lookup (c, &base_key, &got));
    nl_algo_cache_store (c, &base_key, &ch);
    NlAlgoChoice ch2 = { 1, 0, 0, 1.0 / 3.0 };
    nl_algo_cache_store (c, &k2, &ch2);
    g_assert_true (nl_algo_cache_lookup (c, &base_key, &got));
    g_assert_cmpint (got.algo, ==, 6);
  }
  g_autoptr (NlAlgoCache) again = nl_algo_cache_new (path);
  g_assert_cmpuint (nl_algo_cache_size (again), ==, 2);
  g_assert_true (nl_algo_cache_lookup (again, &base_key, &got));
  g_assert_cmpint (got.algo, ==, 6);
  g_assert_cmpint (got.math_type, ==, 1);
  g_assert_cmpuint (got.workspace, ==, 123456789012ULL);
  g_assert_cmpfloat (got.ms, ==, 0.3125);
  g_assert_true (nl_algo_cache_lookup (again, &k2, &got));
  g_assert_cmpint (got.algo, ==, 1);
  g_assert_cmpfloat (got.ms, ==, 1.0 / 3.0); /* g_ascii_dtostr round-trips doubles */
  /* the text is what the header promises: magic, one line per entry, the end line */
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_true (g_str_has_prefix (text, "netloom-algo-cache 1\n"));
  g_assert_nonnull (strstr (text, "NVIDIA H200\t90100\tfwd\t0\t"));
  g_assert_nonnull (strstr (text, "\nend 2 "));
  nl_test_remove_tree (dir);
}

static void
test_key_components (void)
{
  g_autoptr (NlAlgoCache) c = nl_algo_cache_new (NULL);
  NlAlgoKey keys[6];
  for (int i = 0; i < 6; i++)
    keys[i] = base_key;
  keys[1].device = "NVIDIA H100 80GB HBM3";
  keys[2].cudnn_version = 90000;
  keys[3].op = NL_ALGO_OP_BWD_DATA;
  keys[4].shape = "x128x64x32x32 w64x64x3x3 p1 s1 d1 g1 bf16 acc-f32";
  keys[5].deterministic = TRUE;
  for (int i = 0; i < 6; i++)
    {
      NlAlgoChoice ch = { i, 0, 0, 0 };
      nl_algo_cache_store (c, &keys[i], &ch);
    }
  g_assert_cmpuint (nl_algo_cache_size (c), ==, 6);
  for (int i = 0; i < 6; i++)
    {
      NlAlgoChoice got;
      g_assert_true (nl_algo_cache_lookup (c, &keys[i], &got));
      g_assert_cmpint (got.algo, ==, i);
    }
  NlAlgoKey other = base_key;
  other.op = NL_ALGO_OP_BWD_FILTER;
  NlAlgoChoice got;
  g_assert_false (nl_algo_cache_lookup (c, &other, &got));
  /* a memory-only cache writes nothing and stays silent */
  g_autofree char *text = nl_algo_cache_to_text (c);
  g_assert_nonnull (strstr (text, "\nend 6 "));
}

/* One process's share: n keys of its own, each written through at once. */
static void G_GNUC_NORETURN
writer_child (const char *path, int which, int n, int go_fd)
{
  char byte;
  if (read (go_fd, &byte, 1) != 1)
    _exit (3);
  NlAlgoCache *c = nl_algo_cache_new (path);
  for (int i = 0; i < n; i++)
    {
      g_autofree char *shape = g_strdup_printf ("proc%d shape%d", which, i);
      NlAlgoKey k = base_key;
      k.shape = shape;
      NlAlgoChoice ch = { which * 1000 + i, 0, (guint64) i, 0.5 };
      nl_algo_cache_store (c, &k, &ch);
    }
  nl_algo_cache_free (c);
  _exit (0);
}

static void
test_concurrent_writers (void)
{
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = g_build_filename (dir, "cudnn-algos.txt", NULL);
  enum { N = 40 };
  int go[2];
  g_assert_cmpint (pipe (go), ==, 0);
  pid_t pids[2];
  for (int p = 0; p < 2; p++)
    {
      pids[p] = fork ();
      g_assert_cmpint (pids[p], >=, 0);
      if (pids[p] == 0)
        {
          close (go[1]);
          writer_child (path, p, N, go[0]);
        }
    }
  close (go[0]);
  /* both start together: each read blocks until its byte is here */
  g_assert_cmpint (write (go[1], "ab", 2), ==, 2);
  close (go[1]);
  for (int p = 0; p < 2; p++)
    {
      int status = 0;
      g_assert_cmpint (waitpid (pids[p], &status, 0), ==, pids[p]);
      g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    }
  g_autoptr (NlAlgoCache) c = nl_algo_cache_new (path);
  g_assert_cmpuint (nl_algo_cache_size (c), ==, 2 * N);
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < N; i++)
      {
        g_autofree char *shape = g_strdup_printf ("proc%d shape%d", p, i);
        NlAlgoKey k = base_key;
        k.shape = shape;
        NlAlgoChoice got;
        g_assert_true (nl_algo_cache_lookup (c, &k, &got));
        g_assert_cmpint (got.algo, ==, p * 1000 + i);
      }
  nl_test_remove_tree (dir);
}

/* A good file with two entries, then damaged by how. */
static void
damaged_case (const char *how)
{
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = g_build_filename (dir, "cudnn-algos.txt", NULL);
  NlAlgoChoice ch = { 3, 0, 64, 1.5 };
  {
    g_autoptr (NlAlgoCache) c = nl_algo_cache_new (path);
    nl_algo_cache_store (c, &base_key, &ch);
    NlAlgoKey k = base_key;
    k.op = NL_ALGO_OP_BWD_FILTER;
    nl_algo_cache_store (c, &k, &ch);
  }
  g_autofree char *text = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (path, &text, &len, NULL));
  if (strcmp (how, "truncated") == 0)
    len = len * 2 / 3;
  else if (strcmp (how, "garbage") == 0)
    for (gsize i = 0; i < len; i++)
      text[i] = (char) (i * 131 + 7);
  else if (strcmp (how, "checksum") == 0)
    {
      char *tab = strstr (text, "\tfwd\t");
      g_assert_nonnull (tab);
      tab[1] = 'F'; /* still a line, but not the one summed */
    }
  else if (strcmp (how, "version") == 0)
    text[strlen ("netloom-algo-cache ")] = '9';
  else if (strcmp (how, "empty") == 0)
    len = 0;
  g_assert_true (g_file_set_contents (path, text, (gssize) len, NULL));

  g_test_expect_message ("netloom", G_LOG_LEVEL_WARNING, "*algorithm cache*cudnn-algos.txt is damaged*");
  g_autoptr (NlAlgoCache) c = nl_algo_cache_new (path);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (nl_algo_cache_size (c), ==, 0);
  /* rewritten at once: the next process reads it without a warning */
  {
    g_autoptr (NlAlgoCache) again = nl_algo_cache_new (path);
    g_assert_cmpuint (nl_algo_cache_size (again), ==, 0);
  }
  nl_algo_cache_store (c, &base_key, &ch);
  g_autoptr (NlAlgoCache) again = nl_algo_cache_new (path);
  g_assert_cmpuint (nl_algo_cache_size (again), ==, 1);
  NlAlgoChoice got;
  g_assert_true (nl_algo_cache_lookup (again, &base_key, &got));
  g_assert_cmpint (got.algo, ==, 3);
  nl_test_remove_tree (dir);
}

static void
test_damaged (gconstpointer how)
{
  damaged_case (how);
}

static void
test_read_only_dir (void)
{
  g_autofree char *dir = temp_dir ();
  /* a file where the cache folder should be: no mkdir or open gets past
   * it, root included (a chmod'ed folder stops no root) */
  g_autofree char *blocker = g_build_filename (dir, "netloom", NULL);
  g_assert_true (g_file_set_contents (blocker, "x", 1, NULL));
  g_autofree char *path = g_build_filename (blocker, "cudnn-algos.txt", NULL);
  g_autoptr (NlAlgoCache) c = nl_algo_cache_new (path); /* absent: silent */
  g_test_expect_message ("netloom", G_LOG_LEVEL_WARNING, "*algorithm cache*cannot be written*in memory*");
  for (int i = 0; i < 5; i++)
    {
      g_autofree char *shape = g_strdup_printf ("shape%d", i);
      NlAlgoKey k = base_key;
      k.shape = shape;
      NlAlgoChoice ch = { i, 0, 0, 0 };
      nl_algo_cache_store (c, &k, &ch); /* one warning, not five */
    }
  g_test_assert_expected_messages ();
  g_assert_cmpuint (nl_algo_cache_size (c), ==, 5);
  NlAlgoChoice got;
  NlAlgoKey k = base_key;
  k.shape = "shape4";
  g_assert_true (nl_algo_cache_lookup (c, &k, &got));
  g_assert_cmpint (got.algo, ==, 4);
  nl_test_remove_tree (dir);
}

static void
test_default_path (void)
{
  g_autofree char *path = nl_algo_cache_default_path ();
  g_autofree char *want = g_build_filename (g_get_user_cache_dir (), "netloom", "cudnn-algos.txt", NULL);
  g_assert_cmpstr (path, ==, want);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/algo-cache/round-trip", test_round_trip);
  g_test_add_func ("/algo-cache/key-components", test_key_components);
  g_test_add_func ("/algo-cache/concurrent-writers", test_concurrent_writers);
  static const char *const damage[] = { "truncated", "garbage", "checksum", "version", "empty" };
  for (guint i = 0; i < G_N_ELEMENTS (damage); i++)
    {
      g_autofree char *name = g_strdup_printf ("/algo-cache/damaged/%s", damage[i]);
      g_test_add_data_func (name, damage[i], test_damaged);
    }
  g_test_add_func ("/algo-cache/read-only-dir", test_read_only_dir);
  g_test_add_func ("/algo-cache/default-path", test_default_path);
  return g_test_run ();
}
