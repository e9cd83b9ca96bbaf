/* test-text-data.c — the tokenizer, vocabularies (build, encode, decode,
 * JSON), the text and text-lm datasets and their bad-input messages. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "engine/data/nl-dataset.h"
#include "engine/data/nl-packed-dataset.h"
#include "engine/data/nl-text-dataset.h"
#include "engine/data/nl-tokenizer.h"
#include "engine/data/nl-vocab.h"
#include "nl-test-util.h"

static char *tmp_dir;

static char *
write_file (const char *name, const char *contents, gssize len)
{
  char *path = g_build_filename (tmp_dir, name, NULL);
  g_assert_true (g_file_set_contents (path, contents, len, NULL));
  return path;
}

static void
assert_tokens (NlTokenizerKind kind, const char *text, const char *const *want)
{
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) got = nl_tokenize_strv (kind, text, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpstrv (got, want);
}

/* ---- tokenizer ---- */

static void
test_tokenizer_unicode (void)
{
  assert_tokens (NL_TOKENIZER_WORD, "Ünïcödé Straße", (const char *[]) { "ünïcödé", "straße", NULL });
  assert_tokens (NL_TOKENIZER_WORD, "Hello, World! x2-y3", (const char *[]) { "hello", "world", "x2", "y3", NULL });
  /* CJK ideographs are letters: a run of them is one word; the ideographic comma splits */
  assert_tokens (NL_TOKENIZER_WORD, "你好，世界", (const char *[]) { "你好", "世界", NULL });
  /* emoji are symbols, not alphanumeric: dropped by words, kept by chars */
  assert_tokens (NL_TOKENIZER_WORD, "I \xe2\x9d\xa4\xef\xb8\x8f \xf0\x9f\x8d\x95 pizza", (const char *[]) { "i", "pizza", NULL });
  assert_tokens (NL_TOKENIZER_CHAR, "a\xf0\x9f\x8d\x95\xe2\x9d\xa4\xef\xb8\x8f",
                 (const char *[]) { "a", "\xf0\x9f\x8d\x95", "\xe2\x9d\xa4", "\xef\xb8\x8f", NULL });
  /* a combining acute accent stays with its letter as a word, is its own char */
  assert_tokens (NL_TOKENIZER_WORD, "Cafe\xcc\x81 noir", (const char *[]) { "cafe\xcc\x81", "noir", NULL });
  assert_tokens (NL_TOKENIZER_CHAR, "e\xcc\x81 ", (const char *[]) { "e", "\xcc\x81", " ", NULL });
  /* chars are not lower-cased */
  assert_tokens (NL_TOKENIZER_CHAR, "Ab\n", (const char *[]) { "A", "b", "\n", NULL });
  assert_tokens (NL_TOKENIZER_WORD, "", (const char *[]) { NULL });
  assert_tokens (NL_TOKENIZER_CHAR, "", (const char *[]) { NULL });
  assert_tokens (NL_TOKENIZER_WORD, " ,.;!? ", (const char *[]) { NULL });
}

static void
test_tokenizer_long_and_invalid (void)
{
  g_autoptr (GError) error = NULL;
  /* 2 MB of "ab " */
  gsize n = 2 * 1024 * 1024 / 3;
  GString *s = g_string_sized_new (3 * n);
  for (gsize i = 0; i < n; i++)
    g_string_append (s, i % 2 ? "ab " : "Ab ");
  g_auto (GStrv) words = nl_tokenize_strv (NL_TOKENIZER_WORD, s->str, s->len, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (words), ==, n);
  g_assert_cmpstr (words[0], ==, "ab");
  g_assert_cmpstr (words[n - 1], ==, "ab");
  g_auto (GStrv) chars = nl_tokenize_strv (NL_TOKENIZER_CHAR, s->str, s->len, &error);
  g_assert_cmpuint (g_strv_length (chars), ==, 3 * n);
  g_string_free (s, TRUE);

  /* invalid UTF-8: the byte is named, nothing is tokenized */
  g_auto (GStrv) bad = nl_tokenize_strv (NL_TOKENIZER_WORD, "ab\xff" "cd", -1, &error);
  g_assert_null (bad);
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT);
  g_assert_nonnull (strstr (error->message, "invalid UTF-8 at byte 2"));
  g_clear_error (&error);
  g_auto (GStrv) cut = nl_tokenize_strv (NL_TOKENIZER_CHAR, "\xc3\xa9\xc3", -1, &error);
  g_assert_null (cut);
  g_assert_nonnull (strstr (error->message, "byte 2"));

  /* clipping lands on a character boundary */
  g_assert_cmpuint (nl_utf8_clip ("\xc3\xa9\xc3\xa9", 4, 3), ==, 2);
  g_assert_cmpuint (nl_utf8_clip ("\xc3\xa9\xc3\xa9", 4, 2), ==, 2);
  g_assert_cmpuint (nl_utf8_clip ("abc", 3, 5), ==, 3);
  g_assert_cmpuint (nl_utf8_clip ("\xf0\x9f\x8d\x95x", 5, 3), ==, 0);
}

/* ---- vocabulary ---- */

static NlVocab *
small_vocab (int vocab_size, int min_count)
{
  g_autoptr (GError) error = NULL;
  const char *texts[] = { "b a a c", "C, A. B d", NULL };
  NlVocab *v = nl_vocab_build (NL_TOKENIZER_WORD, texts, -1, vocab_size, min_count, &error);
  g_assert_no_error (error);
  return v;
}

static void
assert_vocab_tokens (NlVocab *v, const char *const *want)
{
  int n = (int) g_strv_length ((char **) want);
  g_assert_cmpint (nl_vocab_size (v), ==, n);
  for (int i = 0; i < n; i++)
    {
      g_assert_cmpstr (nl_vocab_token (v, i), ==, want[i]);
      g_assert_cmpint (nl_vocab_lookup (v, want[i]), ==, i);
    }
  g_assert_null (nl_vocab_token (v, n));
  g_assert_null (nl_vocab_token (v, -1));
}

static void
test_vocab_build (void)
{
  g_autoptr (GError) error = NULL;
  /* counts a 3, b 2, c 2, d 1: b before c by bytes */
  g_autoptr (NlVocab) all = small_vocab (0, 0);
  assert_vocab_tokens (all, (const char *[]) { "<pad>", "<unk>", "a", "b", "c", "d", NULL });
  g_assert_cmpint (nl_vocab_lookup (all, "zebra"), ==, NL_VOCAB_UNK);
  g_autoptr (NlVocab) frequent = small_vocab (0, 2);
  assert_vocab_tokens (frequent, (const char *[]) { "<pad>", "<unk>", "a", "b", "c", NULL });
  g_autoptr (NlVocab) small = small_vocab (4, 1);
  assert_vocab_tokens (small, (const char *[]) { "<pad>", "<unk>", "a", "b", NULL });
  g_autoptr (NlVocab) specials = small_vocab (2, 1);
  assert_vocab_tokens (specials, (const char *[]) { "<pad>", "<unk>", NULL });

  /* the same tokens and counts in any order give the same vocabulary */
  const char *tok1[] = { "x", "y", "z", "w" }, *tok2[] = { "w", "z", "y", "x" };
  int64_t c1[] = { 5, 5, 7, 5 }, c2[] = { 5, 7, 5, 5 };
  g_autoptr (NlVocab) v1 = nl_vocab_build_from_counts (NL_TOKENIZER_WORD, tok1, c1, 4, 0, 0, &error);
  g_autoptr (NlVocab) v2 = nl_vocab_build_from_counts (NL_TOKENIZER_WORD, tok2, c2, 4, 0, 0, &error);
  g_assert_no_error (error);
  assert_vocab_tokens (v1, (const char *[]) { "<pad>", "<unk>", "z", "w", "x", "y", NULL });
  g_autofree char *j1 = nl_vocab_to_json (v1), *j2 = nl_vocab_to_json (v2);
  g_assert_cmpstr (j1, ==, j2);

  /* bad sizes and invalid text */
  g_assert_null (nl_vocab_build_from_counts (NL_TOKENIZER_WORD, tok1, c1, 4, 1, 0, &error));
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC);
  g_clear_error (&error);
  const char *bad[] = { "fine", "not \xfe fine" };
  g_assert_null (nl_vocab_build (NL_TOKENIZER_WORD, bad, 2, 0, 0, &error));
  g_assert_nonnull (strstr (error->message, "text 1: invalid UTF-8 at byte 4"));
}

static void
test_vocab_encode_decode (void)
{
  g_autoptr (NlVocab) v = small_vocab (0, 0);
  float ids[5];
  int before = -1;
  g_assert_cmpint (nl_vocab_encode (v, "A b zebra", 5, ids, &before), ==, 3);
  g_assert_cmpint (before, ==, 3);
  const float want[5] = { 2, 3, 1, 0, 0 };
  g_assert_cmpmem (ids, sizeof ids, want, sizeof want);
  g_autofree char *text = nl_vocab_decode (v, ids, 5);
  g_assert_cmpstr (text, ==, "a b <unk>");
  g_assert_cmpint (nl_vocab_encode (v, "d c b a", 2, ids, &before), ==, 2);
  g_assert_cmpint (before, ==, 4);
  g_assert_cmpfloat (ids[0], ==, 5);
  g_assert_cmpfloat (ids[1], ==, 4);
  /* typed text that is not UTF-8 still encodes */
  g_assert_cmpint (nl_vocab_encode (v, "a \xff b", 5, ids, NULL), ==, 2);
  g_assert_cmpint (nl_vocab_encode (v, "", 3, ids, &before), ==, 0);
  g_assert_cmpint (before, ==, 0);
  /* ids out of range decode as <unk> */
  const float odd[3] = { 2, 99, -1 };
  g_autofree char *odd_text = nl_vocab_decode (v, odd, 3);
  g_assert_cmpstr (odd_text, ==, "a <unk> <unk>");

  /* chars: decode(encode(t)) == t when every char is known */
  const char *texts[] = { "héllo wörld\n\"quoted\" \\ 🍕", NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (NlVocab) cv = nl_vocab_build (NL_TOKENIZER_CHAR, texts, -1, 0, 0, &error);
  g_assert_no_error (error);
  float cids[64];
  int n = nl_vocab_encode (cv, texts[0], 64, cids, NULL);
  g_assert_cmpint (n, ==, g_utf8_strlen (texts[0], -1));
  g_autofree char *back = nl_vocab_decode (cv, cids, 64);
  g_assert_cmpstr (back, ==, texts[0]);
}

static void
test_vocab_json (void)
{
  g_autoptr (GError) error = NULL;
  const char *texts[] = { "a\"b\\c\nd\te\x01", NULL };
  g_autoptr (NlVocab) cv = nl_vocab_build (NL_TOKENIZER_CHAR, texts, -1, 0, 0, &error);
  g_autofree char *json = nl_vocab_to_json (cv);
  g_autoptr (NlVocab) back = nl_vocab_from_json (json, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_vocab_kind (back), ==, NL_TOKENIZER_CHAR);
  g_assert_cmpint (nl_vocab_size (back), ==, nl_vocab_size (cv));
  for (int i = 0; i < nl_vocab_size (cv); i++)
    g_assert_cmpstr (nl_vocab_token (back, i), ==, nl_vocab_token (cv, i));
  g_autofree char *again = nl_vocab_to_json (back);
  g_assert_cmpstr (again, ==, json);
  g_assert_nonnull (strstr (json, "\"format\":\"netloom.vocab\""));

  g_autoptr (NlVocab) wv = small_vocab (0, 0);
  g_autofree char *wjson = nl_vocab_to_json (wv);
  g_assert_cmpstr (wjson, ==, "{\"format\":\"netloom.vocab\",\"version\":1,\"tokenizer\":\"word\","
                              "\"tokens\":[\"<pad>\",\"<unk>\",\"a\",\"b\",\"c\",\"d\"]}");

#define HEAD "{\"format\":\"netloom.vocab\",\"version\":1,"
  static const char *const damaged[] = {
    "", "[]", "{", HEAD "\"tokenizer\":\"word\",\"tokens\":[\"<pad>\",\"<unk>\",\"a\"]",
    "{\"format\":\"netloom.vocabulary\",\"version\":1,\"tokenizer\":\"word\",\"tokens\":[\"<pad>\",\"<unk>\"]}",
    "{\"format\":\"netloom.vocab\",\"version\":2,\"tokenizer\":\"word\",\"tokens\":[\"<pad>\",\"<unk>\"]}",
    "{\"format\":\"netloom.vocab\",\"version\":1.0,\"tokenizer\":\"word\",\"tokens\":[\"<pad>\",\"<unk>\"]}",
    HEAD "\"tokenizer\":\"bpe\",\"tokens\":[\"<pad>\",\"<unk>\"]}",
    HEAD "\"tokenizer\":\"\",\"tokens\":[\"<pad>\",\"<unk>\"]}",
    HEAD "\"tokenizer\":\"word\"}",
    HEAD "\"tokenizer\":\"word\",\"tokens\":[\"<pad>\",\"<unk>\"],\"extra\":1}",
    HEAD "\"tokenizer\":\"word\",\"tokenizer\":\"word\",\"tokens\":[\"<pad>\",\"<unk>\"]}",
    "{\"format\":\"netloom.vocab\",\"format\":\"netloom.vocab\",\"version\":1,\"tokenizer\":\"word\"}",
    HEAD "\"tokenizer\":\"word\",\"tokens\":[\"<unk>\",\"<pad>\"]}",
    HEAD "\"tokenizer\":\"word\",\"tokens\":[\"<pad>\"]}",
    HEAD "\"tokenizer\":\"word\",\"tokens\":{\"a\":1}}",
    HEAD "\"tokenizer\":\"word\",\"tokens\":[\"<pad>\",\"<unk>\",\"a\",\"a\"]}",
    HEAD "\"tokenizer\":\"word\",\"tokens\":[\"<pad>\",\"<unk>\",\"\"]}",
    HEAD "\"tokenizer\":\"word\",\"tokens\":[\"<pad>\",\"<unk>\",7]}",
    HEAD "\"tokenizer\":\"word\",\"tokens\":[\"<pad>\",\"<unk>\",\"<pad>\"]}",
    HEAD "\"tokenizer\":\"char\",\"tokens\":[\"<pad>\",\"<unk>\",\"ab\"]}",
    HEAD "\"tokenizer\":\"word\",\"tokens\":[\"<pad>\",\"<unk>\",\"a\\u0000\"]}",
    HEAD "\"tokenizer\":\"word\",\"tokens\":[\"<pad>\",\"<unk>\",\"\xff\"]}",
  };
#undef HEAD
  for (guint i = 0; i < G_N_ELEMENTS (damaged); i++)
    {
      g_autoptr (GError) e = NULL;
      g_autoptr (NlVocab) v = nl_vocab_from_json (damaged[i], -1, &e);
      g_autofree char *shown = g_utf8_make_valid (damaged[i], -1);
      g_test_message ("damaged %u: %s", i, shown);
      g_assert_null (v);
      g_assert_error (e, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT);
      g_assert_true (g_str_has_prefix (e->message, "not a netloom vocabulary: "));
    }
}

/* ---- text datasets ---- */

static NlDataset *
open_text (const char *path, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  g_autofree char *spec = g_strconcat ("text:", path, NULL);
  return nl_dataset_open_full (spec, train, opts, error);
}

static void
assert_sample (NlDataset *ds, int64_t i, const float *want, int n, float want_label)
{
  g_autofree float *s = g_new (float, nl_shape_numel (&ds->sample_shape));
  float label = -1;
  g_assert_true (nl_dataset_get (ds, i, s, &label, NULL));
  g_assert_cmpmem (s, sizeof (float) * n, want, sizeof (float) * n);
  g_assert_cmpfloat (label, ==, want_label);
}

static void
test_text_dataset (void)
{
  g_autoptr (GError) error = NULL;
  /* 8 rows: row i says "w<i> common", class by i % 3 (names sorted: "cat" < "dog" < "eel") */
  GString *csv = g_string_new ("id,text,label\n");
  const char *names[] = { "eel", "cat", "dog" };
  for (int i = 0; i < 8; i++)
    g_string_append_printf (csv, "%d,\"W%d, common\",%s\n", i, i, names[i % 3]);
  g_autofree char *path = write_file ("eight.csv", csv->str, csv->len);
  g_string_free (csv, TRUE);
  NlDatasetOptions opts = { .val_fraction = 0.25, .max_length = 4 };
  g_autoptr (NlDataset) train = open_text (path, TRUE, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (train->length, ==, 6);
  g_assert_cmpint (train->sample_shape.ndim, ==, 1);
  g_assert_cmpint (train->sample_shape.d[0], ==, 4);
  g_assert_cmpint (train->label_shape.ndim, ==, 0);
  g_assert_cmpint (train->n_classes, ==, 3);
  g_assert_cmpstrv (train->class_names, ((const char *[]) { "cat", "dog", "eel", NULL }));
  /* the vocabulary: "common" (6 times), then the training rows' own words */
  int64_t n_train, n_val;
  g_autofree int64_t *tr = nl_dataset_split (8, 0.25, TRUE, "t", &n_train, NULL);
  g_autofree int64_t *va = nl_dataset_split (8, 0.25, FALSE, "t", &n_val, NULL);
  g_assert_cmpint (nl_vocab_size (train->vocab), ==, 2 + 1 + 6);
  g_assert_cmpstr (nl_vocab_token (train->vocab, 2), ==, "common");
  for (int k = 0; k < n_train; k++)
    {
      g_autofree char *w = g_strdup_printf ("w%" G_GINT64_FORMAT, tr[k]);
      const float want[4] = { (float) nl_vocab_lookup (train->vocab, w), 2, 0, 0 };
      const float cls[3] = { 2, 0, 1 }; /* eel, cat, dog */
      g_assert_cmpint (want[0], >, 2);
      assert_sample (train, k, want, 4, cls[tr[k] % 3]);
    }
  /* the validation side needs the training vocabulary: its own words are <unk> */
  g_autoptr (NlDataset) refused = open_text (path, FALSE, &opts, &error);
  g_assert_null (refused);
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC);
  g_assert_nonnull (strstr (error->message, path));
  g_clear_error (&error);
  opts.vocab = train->vocab;
  g_autoptr (NlDataset) val = open_text (path, FALSE, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (val->length, ==, 2);
  g_assert_true (val->vocab == train->vocab);
  for (int k = 0; k < n_val; k++)
    {
      const float want[4] = { 1, 2, 0, 0 };
      const float cls[3] = { 2, 0, 1 };
      assert_sample (val, k, want, 4, cls[va[k] % 3]);
    }
  /* tokens as read, before the vocabulary */
  const char *tokens[4];
  g_assert_cmpint (nl_text_dataset_tokens (val, 0, tokens, 4), ==, 2);
  g_autofree char *w0 = g_strdup_printf ("w%" G_GINT64_FORMAT, va[0]);
  g_assert_cmpstr (tokens[0], ==, w0);
  g_assert_cmpstr (tokens[1], ==, "common");
}

static void
test_text_quotes_tsv_and_skips (void)
{
  g_autoptr (GError) error = NULL;
  /* a quoted text across lines with a "" quote; an empty text and a punctuation-only one are skipped */
  const char *csv = "text,label\n\"one,\n\"\"two\"\"\",a\n,b\n\"?!\",b\nthree four five,b\n";
  g_autofree char *path = write_file ("quotes.csv", csv, -1);
  NlDatasetOptions opts = { .max_length = 2 };
  g_autoptr (NlDataset) ds = open_text (path, TRUE, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ds->length, ==, 2);
  g_assert_cmpint (ds->n_skipped_rows, ==, 2);
  const char *tokens[3];
  g_assert_cmpint (nl_text_dataset_tokens (ds, 0, tokens, 3), ==, 2);
  g_assert_cmpstr (tokens[1], ==, "two");
  g_assert_cmpint (nl_text_dataset_tokens (ds, 1, tokens, 3), ==, 3);
  g_assert_nonnull (strstr (ds->description, "2 rows without a token skipped"));

  /* tab-separated, other column names, char tokens */
  g_autofree char *tsv = write_file ("t.tsv", "lbl\tbody\nx\tab\ny\tba\n", -1);
  NlDatasetOptions topts = { .text_column = "body", .label_column = "lbl", .tokenizer = NL_TOKENIZER_CHAR,
                             .max_length = 3 };
  g_autoptr (NlDataset) t = open_text (tsv, TRUE, &topts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_vocab_kind (t->vocab), ==, NL_TOKENIZER_CHAR);
  const float want[3] = { 2, 3, 0 }; /* a and b once each: by bytes */
  assert_sample (t, 0, want, 3, 0);
}

/* Opening path as text fails with a message holding every one of `has`. */
static void
assert_refused (const char *spec_kind, const char *path, const NlDatasetOptions *opts, const char *const *has)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *spec = g_strconcat (spec_kind, ":", path, NULL);
  g_autoptr (NlDataset) ds = nl_dataset_open_full (spec, TRUE, opts, &error);
  g_assert_null (ds);
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_true (error->domain == NL_DATA_ERROR);
  for (int i = 0; has[i]; i++)
    if (!strstr (error->message, has[i]))
      g_error ("'%s' lacks '%s'", error->message, has[i]);
}

static void
test_text_bad_input (void)
{
  g_autofree char *no_text = write_file ("no-text.csv", "body,label\nhi,a\n", -1);
  assert_refused ("text", no_text, NULL, (const char *[]) { no_text, ":1:", "'text'", "'body'", NULL });
  g_autofree char *no_label = write_file ("no-label.csv", "text,class\nhi,a\n", -1);
  assert_refused ("text", no_label, NULL, (const char *[]) { no_label, ":1:", "label column named 'label'", NULL });
  g_autofree char *bad_utf8 = write_file ("bad-utf8.csv", "text,label\nfine,a\nalso fine,b\nnot \xc3\x28 fine,a\n", -1);
  assert_refused ("text", bad_utf8, NULL,
                  (const char *[]) { bad_utf8, ":4:", "column 0 ('text')", "invalid UTF-8 at byte 4", NULL });
  g_autofree char *bad_label = write_file ("bad-label.csv", "text,label\nfine,\xff\n", -1);
  assert_refused ("text", bad_label, NULL, (const char *[]) { bad_label, ":2:", "column 1 ('label')", NULL });
  g_autofree char *empty_label = write_file ("empty-label.csv", "text,label\nfine,a\nfine,\n", -1);
  assert_refused ("text", empty_label, NULL, (const char *[]) { empty_label, ":3:", "label is empty", NULL });
  g_autofree char *short_row = write_file ("short.csv", "text,label\nfine,a\n\nfine\n", -1);
  assert_refused ("text", short_row, NULL, (const char *[]) { short_row, ":4:", "1 columns, expected 2", NULL });
  g_autofree char *one = write_file ("one-class.csv", "text,label\nx y,same\nz,same\n", -1);
  assert_refused ("text", one, NULL, (const char *[]) { one, "'label'", "one class ('same')", NULL });
  g_autofree char *all_empty = write_file ("all-empty.csv", "text,label\n,a\n\"...\",b\n", -1);
  assert_refused ("text", all_empty, NULL, (const char *[]) { all_empty, "every text", "2 rows", NULL });
  g_autofree char *quote = write_file ("quote.csv", "text,label\nfine,a\n\"open,b\nmore\n", -1);
  assert_refused ("text", quote, NULL, (const char *[]) { quote, ":3:", "opening quote", NULL });
  g_autofree char *empty = write_file ("empty.csv", "", 0);
  assert_refused ("text", empty, NULL, (const char *[]) { empty, "empty", NULL });
  g_autofree char *header_only = write_file ("header-only.csv", "text,label\n", -1);
  assert_refused ("text", header_only, NULL, (const char *[]) { header_only, "no data rows", NULL });
  assert_refused ("text", "/no/such/file.csv", NULL, (const char *[]) { "/no/such/file.csv", NULL });
  NlDatasetOptions tiny = { .vocab_size = 1 };
  g_autofree char *ok = write_file ("ok.csv", "text,label\nx,a\ny,b\n", -1);
  assert_refused ("text", ok, &tiny, (const char *[]) { "vocabulary size of 1", NULL });
}

/* A row over 1 MB is cut at 1 MB on a character boundary, and counted. */
static void
test_text_megabyte_row (void)
{
  g_autoptr (GError) error = NULL;
  gsize n = 600 * 1024; /* 1.2 MB of two-byte characters */
  GString *csv = g_string_new ("text,label\nshort,a\n\"");
  for (gsize i = 0; i < n; i++)
    g_string_append (csv, "\xc3\xa9");
  g_string_append (csv, "\",b\n");
  g_autofree char *path = write_file ("big.csv", csv->str, csv->len);
  g_string_free (csv, TRUE);
  NlDatasetOptions opts = { .tokenizer = NL_TOKENIZER_CHAR, .max_length = 8 };
  g_autoptr (NlDataset) ds = open_text (path, TRUE, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ds->n_truncated_rows, ==, 1);
  g_assert_cmpint (nl_text_dataset_tokens (ds, 1, NULL, 0), ==, NL_TEXT_MAX_ROW_BYTES / 2);
  const float want[8] = { 2, 2, 2, 2, 2, 2, 2, 2 }; /* é is the most frequent */
  assert_sample (ds, 1, want, 8, 1);
  g_assert_nonnull (strstr (ds->description, "1 rows cut at 1 MB"));
}

/* ---- text-lm ---- */

static void
test_text_lm (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = write_file ("lm.txt", "abcdefghij", -1);
  g_autofree char *spec = g_strconcat ("text-lm:", path, NULL);
  NlDatasetOptions opts = { .tokenizer = NL_TOKENIZER_CHAR, .max_length = 3 };
  g_autoptr (NlDataset) all = nl_dataset_open_full (spec, TRUE, &opts, &error);
  g_assert_no_error (error);
  /* 10 tokens: 3 windows of 3 with their next tokens */
  g_assert_cmpint (all->length, ==, 3);
  g_assert_cmpint (all->label_shape.ndim, ==, 1);
  g_assert_cmpint (all->label_shape.d[0], ==, 3);
  g_assert_cmpint (all->n_classes, ==, nl_vocab_size (all->vocab));
  float s[3], l[3];
  for (int w = 0; w < 3; w++)
    {
      g_assert_true (nl_dataset_get (all, w, s, l, NULL));
      for (int k = 0; k < 3; k++)
        {
          char a[2] = { (char) ('a' + 3 * w + k), 0 }, b[2] = { (char) ('a' + 3 * w + k + 1), 0 };
          g_assert_cmpfloat (s[k], ==, nl_vocab_lookup (all->vocab, a));
          g_assert_cmpfloat (l[k], ==, nl_vocab_lookup (all->vocab, b));
          g_assert_cmpfloat (s[k], >, 1);
        }
    }
  /* the last third of the windows is validation; the vocabulary knows a..g only */
  opts.val_fraction = 1.0 / 3;
  g_autoptr (NlDataset) train = nl_dataset_open_full (spec, TRUE, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (train->length, ==, 2);
  g_assert_cmpint (nl_vocab_size (train->vocab), ==, 2 + 7);
  opts.vocab = train->vocab;
  g_autoptr (NlDataset) val = nl_dataset_open_full (spec, FALSE, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (val->length, ==, 1);
  g_assert_true (nl_dataset_get (val, 0, s, l, NULL));
  const float ws[3] = { (float) nl_vocab_lookup (train->vocab, "g"), 1, 1 }, wl[3] = { 1, 1, 1 };
  g_assert_cmpmem (s, sizeof s, ws, sizeof ws);
  g_assert_cmpmem (l, sizeof l, wl, sizeof wl);
  const char *tokens[3];
  g_assert_cmpint (nl_text_dataset_tokens (val, 0, tokens, 3), ==, 3);
  g_assert_cmpstr (tokens[2], ==, "i");

  /* word tokens over lines; a newline is a separator for words, a token for chars */
  g_autofree char *lines = write_file ("lines.txt", "The cat\nthe dog\n", -1);
  g_autofree char *lspec = g_strconcat ("text-lm:", lines, NULL);
  NlDatasetOptions wopts = { .max_length = 2 };
  g_autoptr (NlDataset) words = nl_dataset_open_full (lspec, TRUE, &wopts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (words->length, ==, 1); /* 4 tokens: (4 - 1) / 2 windows */
  NlDatasetOptions copts = { .tokenizer = NL_TOKENIZER_CHAR, .max_length = 4 };
  g_autoptr (NlDataset) chars = nl_dataset_open_full (lspec, TRUE, &copts, &error);
  g_assert_cmpint (chars->length, ==, (16 - 1) / 4);
  g_assert_cmpint (nl_vocab_lookup (chars->vocab, "\n"), >, 1);

  /* a packed file holds one label and no vocabulary: refused, nothing written */
  g_autofree char *packed = g_build_filename (tmp_dir, "lm.rec", NULL);
  g_assert_false (nl_record_pack_dataset (chars, packed, NULL, &error));
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH);
  g_assert_nonnull (strstr (error->message, packed));
  g_assert_false (g_file_test (packed, G_FILE_TEST_EXISTS));
}

static void
test_text_lm_bad_input (void)
{
  g_autofree char *few = write_file ("few.txt", "ab", -1);
  NlDatasetOptions opts = { .tokenizer = NL_TOKENIZER_CHAR, .max_length = 2 };
  assert_refused ("text-lm", few, &opts, (const char *[]) { few, "2 tokens are too few", "3 tokens at least", NULL });
  g_autofree char *bad = write_file ("bad.txt", "fine line\nbad \xe2\x82 line\n", -1);
  assert_refused ("text-lm", bad, &opts, (const char *[]) { bad, ":2:", "invalid UTF-8 at byte 4", NULL });
  g_autofree char *empty = write_file ("empty.txt", "", 0);
  assert_refused ("text-lm", empty, &opts, (const char *[]) { empty, "0 tokens", NULL });
  g_autofree char *fine = write_file ("fine.txt", "abcdefg", -1);
  g_autofree char *spec = g_strconcat ("text-lm:", fine, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) val = nl_dataset_open_full (spec, FALSE, &opts, &error);
  g_assert_null (val);
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC);
  g_assert_nonnull (strstr (error->message, "vocabulary"));
}

/* The corpus of tools/make-text-corpus.py when NETLOOM_TEXT_CORPUS names it
 * (skipped otherwise: it is made from this machine's manual pages). */
static void
test_real_corpus (void)
{
  const char *path = g_getenv ("NETLOOM_TEXT_CORPUS");
  g_autoptr (GError) error = NULL;
  if (!path)
    {
      g_test_skip ("NETLOOM_TEXT_CORPUS is not set (tools/make-text-corpus.py OUT.csv makes one)");
      return;
    }
  NlDatasetOptions opts = { .val_fraction = 0.2 };
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (NlDataset) train = open_text (path, TRUE, &opts, &error);
  g_assert_no_error (error);
  double seconds = (g_get_monotonic_time () - t0) / 1e6;
  opts.vocab = train->vocab;
  g_autoptr (NlDataset) val = open_text (path, FALSE, &opts, &error);
  g_assert_no_error (error);
  int64_t truncated = 0;
  for (int64_t i = 0; i < train->length; i++)
    truncated += nl_text_dataset_tokens (train, i, NULL, 0) > 128;
  g_test_message ("%s; %s; opened in %.2f s; %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " training samples cut at 128",
                  train->description, val->description, seconds, truncated, train->length);
  g_assert_cmpint (train->n_classes, >=, 2);
  g_assert_cmpint (train->length + val->length, >, 1000);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("netloom-test-text-XXXXXX", &error);
  g_assert_no_error (error);
  g_test_add_func ("/text/tokenizer/unicode", test_tokenizer_unicode);
  g_test_add_func ("/text/tokenizer/long-and-invalid", test_tokenizer_long_and_invalid);
  g_test_add_func ("/text/vocab/build", test_vocab_build);
  g_test_add_func ("/text/vocab/encode-decode", test_vocab_encode_decode);
  g_test_add_func ("/text/vocab/json", test_vocab_json);
  g_test_add_func ("/text/dataset/split-and-vocab", test_text_dataset);
  g_test_add_func ("/text/dataset/quotes-tsv-skips", test_text_quotes_tsv_and_skips);
  g_test_add_func ("/text/dataset/bad-input", test_text_bad_input);
  g_test_add_func ("/text/dataset/megabyte-row", test_text_megabyte_row);
  g_test_add_func ("/text/lm/windows", test_text_lm);
  g_test_add_func ("/text/lm/bad-input", test_text_lm_bad_input);
  g_test_add_func ("/text/dataset/real-corpus", test_real_corpus);
  int rc = g_test_run ();
  nl_test_remove_tree (tmp_dir);
  g_free (tmp_dir);
  return rc;
}
