/* fuzz-replay.c — a main for the gcc build: feeds every file named on the
 * command line (or found directly in a directory named there) to the
 * target's LLVMFuzzerTestOneInput once, in sorted order, so the seed
 * corpora and the regression inputs run in every build without libFuzzer. */
#include <stdio.h>
#include <string.h>

#include "nl-fuzz.h"

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static gboolean
replay_file (const char *path)
{
  g_autofree char *data = NULL;
  gsize size;
  g_autoptr (GError) error = NULL;
  if (!g_file_get_contents (path, &data, &size, &error))
    {
      fprintf (stderr, "fuzz-replay: %s\n", error->message);
      return FALSE;
    }
  /* libFuzzer hands the target a buffer of exactly size bytes: a copy, so
   * ASan sees a read past the end (g_file_get_contents adds a NUL) */
  g_autofree guint8 *copy = g_memdup2 (data, size);
  LLVMFuzzerTestOneInput (copy, size);
  return TRUE;
}

int
main (int argc, char **argv)
{
  int n = 0;
  nl_fuzz_init ();
  for (int a = 1; a < argc; a++)
    {
      if (!g_file_test (argv[a], G_FILE_TEST_IS_DIR))
        {
          if (!replay_file (argv[a]))
            return 1;
          n++;
          continue;
        }
      g_autoptr (GError) error = NULL;
      GDir *dir = g_dir_open (argv[a], 0, &error);
      if (!dir)
        {
          fprintf (stderr, "fuzz-replay: %s\n", error->message);
          return 1;
        }
      g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      const char *name;
      while ((name = g_dir_read_name (dir)))
        g_ptr_array_add (names, g_build_filename (argv[a], name, NULL));
      g_dir_close (dir);
      g_ptr_array_sort (names, compare_names);
      for (guint i = 0; i < names->len; i++)
        if (g_file_test (names->pdata[i], G_FILE_TEST_IS_REGULAR))
          {
            if (!replay_file (names->pdata[i]))
              return 1;
            n++;
          }
    }
  printf ("fuzz-replay: %d inputs, no finding\n", n);
  /* an empty corpus would pass without testing anything */
  return n > 0 ? 0 : 1;
}
