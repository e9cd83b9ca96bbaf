/* fuzz-algo-cache.c — cuDNN's autotune cache file (core/nl-algo-cache.c):
 * what the parser takes must write back to text that reads again to the
 * same entries and the same text; what it refuses leaves the cache empty.
 * Input: the file's bytes. */
#include "nl-fuzz.h"
#include "core/nl-algo-cache.h"

#include <string.h>

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  nl_fuzz_init ();
  g_autoptr (GError) error = NULL;
  g_autoptr (NlAlgoCache) c = nl_algo_cache_new (NULL);
  if (!nl_algo_cache_parse (c, (const char *) data, size, &error))
    {
      g_assert_nonnull (error);
      g_assert_cmpuint (nl_algo_cache_size (c), ==, 0);
      return 0;
    }
  g_autofree char *text = nl_algo_cache_to_text (c);
  g_autoptr (NlAlgoCache) again = nl_algo_cache_new (NULL);
  g_assert_true (nl_algo_cache_parse (again, text, strlen (text), &error));
  g_assert_cmpuint (nl_algo_cache_size (again), ==, nl_algo_cache_size (c));
  g_autofree char *text2 = nl_algo_cache_to_text (again);
  g_assert_cmpstr (text, ==, text2);
  return 0;
}
