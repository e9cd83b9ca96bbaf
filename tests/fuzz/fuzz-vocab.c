/* fuzz-vocab.c — a vocabulary's JSON (engine/data/nl-vocab.c): what the
 * strict reader takes must write back to the same text and read again, and
 * encode / decode with it must hold their promises. Input: the JSON. */
#include "nl-fuzz.h"
#include "engine/data/nl-vocab.h"

#include <string.h>

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  nl_fuzz_init ();
  g_autoptr (GError) error = NULL;
  g_autoptr (NlVocab) v = nl_vocab_from_json ((const char *) data, (gssize) size, &error);
  if (!v)
    {
      g_assert_true (g_str_has_prefix (error->message, "not a netloom vocabulary: "));
      return 0;
    }
  g_autofree char *json = nl_vocab_to_json (v);
  g_autoptr (NlVocab) again = nl_vocab_from_json (json, -1, &error);
  g_assert_nonnull (again);
  g_autofree char *json2 = nl_vocab_to_json (again);
  g_assert_cmpstr (json, ==, json2);
  float ids[16];
  int n_before = 0;
  int n = nl_vocab_encode (v, "The quick brown fox, \xc3\xa9t\xc3\xa9 \xff!", 16, ids, &n_before);
  g_assert_true (n >= 0 && n <= 16 && n <= n_before);
  for (int i = 0; i < 16; i++)
    g_assert_true (ids[i] >= 0 && ids[i] < nl_vocab_size (v) && (i < n || ids[i] == 0));
  g_autofree char *text = nl_vocab_decode (v, ids, 16);
  g_assert_true (g_utf8_validate (text, -1, NULL));
  return 0;
}
