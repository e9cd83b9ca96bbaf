/* nl-vocab.c — vocabularies (nl-vocab.h): building, encoding, decoding and
 * the JSON form. */
#include "engine/data/nl-vocab.h"
#include "engine/data/nl-dataset.h"
#include "core/nl-json-doc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct NlVocab {
  gint ref_count;
  NlTokenizerKind kind;
  GPtrArray *tokens;  /* char*, id order */
  GHashTable *ids;    /* token (borrowed from tokens) -> id + 1 */
};

static NlVocab *
vocab_new (NlTokenizerKind kind)
{
  NlVocab *v = g_new0 (NlVocab, 1);
  v->ref_count = 1;
  v->kind = kind;
  v->tokens = g_ptr_array_new_with_free_func (g_free);
  v->ids = g_hash_table_new (g_str_hash, g_str_equal);
  return v;
}

/* FALSE when token is already there. */
static gboolean
vocab_add (NlVocab *v, const char *token)
{
  char *copy = g_strdup (token);
  if (g_hash_table_contains (v->ids, copy))
    {
      g_free (copy);
      return FALSE;
    }
  g_ptr_array_add (v->tokens, copy);
  g_hash_table_insert (v->ids, copy, GINT_TO_POINTER (v->tokens->len));
  return TRUE;
}

NlVocab *
nl_vocab_ref (NlVocab *v)
{
  g_return_val_if_fail (v != NULL, NULL);
  g_atomic_int_inc (&v->ref_count);
  return v;
}

void
nl_vocab_unref (NlVocab *v)
{
  if (!v || !g_atomic_int_dec_and_test (&v->ref_count))
    return;
  g_hash_table_destroy (v->ids);
  g_ptr_array_free (v->tokens, TRUE);
  g_free (v);
}

typedef struct {
  const char *token;
  int64_t count;
} Entry;

/* most frequent first, then by the token's bytes: a total order */
static int
compare_entries (const void *a, const void *b)
{
  const Entry *x = a, *y = b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return strcmp (x->token, y->token);
}

NlVocab *
nl_vocab_build_from_counts (NlTokenizerKind kind, const char *const *tokens, const int64_t *counts, gsize n,
                            int vocab_size, int min_count, GError **error)
{
  if (vocab_size == 0)
    vocab_size = NL_VOCAB_DEFAULT_SIZE;
  if (min_count == 0)
    min_count = 1;
  if (vocab_size < 2 || min_count < 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                   vocab_size < 2 ? "a vocabulary size of %d is too small: it holds <pad> and <unk> at least (2)"
                                  : "a minimum count of %d is negative", vocab_size < 2 ? vocab_size : min_count);
      return NULL;
    }
  g_autofree Entry *e = g_new (Entry, MAX (n, 1));
  gsize m = 0;
  for (gsize i = 0; i < n; i++)
    if (counts[i] >= min_count)
      e[m++] = (Entry) { tokens[i], counts[i] };
  qsort (e, m, sizeof *e, compare_entries);
  NlVocab *v = vocab_new (kind);
  vocab_add (v, "<pad>");
  vocab_add (v, "<unk>");
  for (gsize i = 0; i < m && v->tokens->len < (guint) vocab_size; i++)
    vocab_add (v, e[i].token);
  return v;
}

typedef struct {
  GHashTable *counts; /* token -> count (int64 in a pointer-sized slot) */
} Counter;

static void
count_token (const char *token, gsize len, gpointer user_data)
{
  Counter *c = user_data;
  gpointer old;
  if (g_hash_table_lookup_extended (c->counts, token, NULL, &old))
    g_hash_table_insert (c->counts, g_strdup (token), GSIZE_TO_POINTER (GPOINTER_TO_SIZE (old) + 1));
  else
    g_hash_table_insert (c->counts, g_strdup (token), GSIZE_TO_POINTER (1));
}

NlVocab *
nl_vocab_build (NlTokenizerKind kind, const char *const *texts, gssize n, int vocab_size, int min_count,
                GError **error)
{
  Counter c = { g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL) };
  NlVocab *v = NULL;
  gssize i;
  for (i = 0; n < 0 ? texts[i] != NULL : i < n; i++)
    {
      g_autoptr (GError) why = NULL;
      if (!nl_tokenize (kind, texts[i], -1, count_token, &c, &why))
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "text %" G_GSSIZE_FORMAT ": %s", i,
                       why->message);
          g_hash_table_destroy (c.counts);
          return NULL;
        }
    }
  guint m = g_hash_table_size (c.counts);
  g_autofree const char **tokens = g_new (const char *, MAX (m, 1));
  g_autofree int64_t *counts = g_new (int64_t, MAX (m, 1));
  GHashTableIter it;
  gpointer key, value;
  guint k = 0;
  g_hash_table_iter_init (&it, c.counts);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      tokens[k] = key;
      counts[k++] = (int64_t) GPOINTER_TO_SIZE (value);
    }
  v = nl_vocab_build_from_counts (kind, tokens, counts, m, vocab_size, min_count, error);
  g_hash_table_destroy (c.counts);
  return v;
}

NlTokenizerKind
nl_vocab_kind (const NlVocab *v)
{
  return v->kind;
}

int
nl_vocab_size (const NlVocab *v)
{
  return (int) v->tokens->len;
}

const char *
nl_vocab_token (const NlVocab *v, int id)
{
  return id >= 0 && (guint) id < v->tokens->len ? v->tokens->pdata[id] : NULL;
}

int
nl_vocab_lookup (const NlVocab *v, const char *token)
{
  int id = GPOINTER_TO_INT (g_hash_table_lookup (v->ids, token));
  return id > 0 ? id - 1 : NL_VOCAB_UNK;
}

typedef struct {
  const NlVocab *v;
  float *ids;
  int max_len, n;
} Encoder;

static void
encode_token (const char *token, gsize len, gpointer user_data)
{
  Encoder *e = user_data;
  if (e->n < e->max_len)
    e->ids[e->n] = (float) nl_vocab_lookup (e->v, token);
  e->n++;
}

int
nl_vocab_encode (const NlVocab *v, const char *text, int max_len, float *ids, int *n_tokens_before_truncation)
{
  g_autofree char *valid = g_utf8_make_valid (text ? text : "", -1);
  Encoder e = { v, ids, MAX (max_len, 0), 0 };
  nl_tokenize (v->kind, valid, -1, encode_token, &e, NULL);
  int written = MIN (e.n, e.max_len);
  for (int i = written; i < e.max_len; i++)
    ids[i] = NL_VOCAB_PAD;
  if (n_tokens_before_truncation)
    *n_tokens_before_truncation = e.n;
  return written;
}

char *
nl_vocab_decode (const NlVocab *v, const float *ids, int n)
{
  GString *s = g_string_new (NULL);
  gboolean first = TRUE;
  for (int i = 0; i < n; i++)
    {
      float f = ids[i];
      int id = isfinite (f) && f >= 0 && f < (float) v->tokens->len ? (int) f : NL_VOCAB_UNK;
      if (id == NL_VOCAB_PAD)
        continue;
      if (v->kind == NL_TOKENIZER_WORD && !first)
        g_string_append_c (s, ' ');
      g_string_append (s, v->tokens->pdata[id]);
      first = FALSE;
    }
  return g_string_free (s, FALSE);
}

/* a JSON string: quotes, backslashes and control characters escaped */
static void
append_json_string (GString *s, const char *text)
{
  g_string_append_c (s, '"');
  for (const guchar *p = (const guchar *) text; *p; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_printf (s, "\\%c", *p);
      else if (*p < 0x20)
        g_string_append_printf (s, "\\u%04x", *p);
      else
        g_string_append_c (s, (char) *p);
    }
  g_string_append_c (s, '"');
}

char *
nl_vocab_to_json (const NlVocab *v)
{
  GString *s = g_string_new ("{\"format\":\"netloom.vocab\",\"version\":1,\"tokenizer\":");
  append_json_string (s, nl_tokenizer_kind_name (v->kind));
  g_string_append (s, ",\"tokens\":[");
  for (guint i = 0; i < v->tokens->len; i++)
    {
      if (i)
        g_string_append_c (s, ',');
      append_json_string (s, v->tokens->pdata[i]);
    }
  g_string_append (s, "]}");
  return g_string_free (s, FALSE);
}

/* NULL when root is the vocabulary form, else why not (static). */
static const char *
check_form (const NlJsonValue *root, NlTokenizerKind *kind)
{
  if (root->type != NL_JSON_OBJECT)
    return "not a JSON object";
  for (const NlJsonValue *k = nl_json_first (root); k; k = nl_json_next (root, k))
    if (strcmp (k->s, "format") && strcmp (k->s, "version") && strcmp (k->s, "tokenizer") && strcmp (k->s, "tokens"))
      return "an unknown member (only format, version, tokenizer and tokens)";
  if (root->count != 4)
    return "a member is missing or repeated (format, version, tokenizer and tokens, once each)";
  const NlJsonValue *format = nl_json_member (root, "format"), *version = nl_json_member (root, "version");
  const NlJsonValue *tok = nl_json_member (root, "tokenizer"), *tokens = nl_json_member (root, "tokens");
  /* four known names, each there: each once */
  if (!format || !version || !tok || !tokens)
    return "a member is missing or repeated (format, version, tokenizer and tokens, once each)";
  if (format->type != NL_JSON_STRING || strcmp (format->s, "netloom.vocab") != 0)
    return "format is not \"netloom.vocab\"";
  if (version->type != NL_JSON_INT || version->i != 1)
    return "version is not 1";
  if (tok->type != NL_JSON_STRING || !nl_tokenizer_kind_parse (tok->s, kind) || !*tok->s)
    return "tokenizer is not \"word\" or \"char\"";
  if (tokens->type != NL_JSON_ARRAY || tokens->count < 2)
    return "tokens is not an array starting with \"<pad>\" and \"<unk>\"";
  return NULL;
}

NlVocab *
nl_vocab_from_json (const char *json, gssize len, GError **error)
{
  g_autoptr (GError) why = NULL;
  g_autoptr (NlJsonDoc) doc = json ? nl_json_doc_parse (json, len, &why) : NULL;
  NlTokenizerKind kind = NL_TOKENIZER_WORD;
  const char *problem = !json ? "no text" : !doc ? why->message : check_form (nl_json_doc_root (doc), &kind);
  g_autoptr (NlVocab) v = NULL;

  if (!problem)
    {
      const NlJsonValue *tokens = nl_json_member (nl_json_doc_root (doc), "tokens");
      v = vocab_new (kind);
      for (const NlJsonValue *t = nl_json_first (tokens); t && !problem; t = nl_json_next (tokens, t))
        {
          guint id = v->tokens->len;
          if (t->type != NL_JSON_STRING || !*t->s)
            problem = "a token is not a non-empty string";
          else if ((id == NL_VOCAB_PAD && strcmp (t->s, "<pad>")) || (id == NL_VOCAB_UNK && strcmp (t->s, "<unk>")))
            problem = "tokens do not start with \"<pad>\" and \"<unk>\"";
          else if (kind == NL_TOKENIZER_CHAR && id > NL_VOCAB_UNK && g_utf8_strlen (t->s, -1) != 1)
            problem = "a char vocabulary's token is more than one character";
          else if (!vocab_add (v, t->s))
            problem = "a token is listed twice";
        }
    }
  if (problem)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "not a netloom vocabulary: %s", problem);
      return NULL;
    }
  return g_steal_pointer (&v);
}
