/* nl-vocab.h — a vocabulary: tokens and their ids for the text datasets,
 * stored with a run (as JSON) so that evaluate, predict, fork and export
 * encode text exactly as training did.
 *
 * Id 0 is "<pad>" (what samples are padded with) and 1 "<unk>" (any token
 * not in the vocabulary); the other tokens follow by falling count, ties
 * broken by the token's bytes (strcmp), so the same texts always give the
 * same ids. A vocabulary is immutable once built and reference counted:
 * safe from any thread. */
#pragma once

#include <glib.h>

#include "engine/data/nl-tokenizer.h"

G_BEGIN_DECLS

#define NL_VOCAB_PAD 0
#define NL_VOCAB_UNK 1
#define NL_VOCAB_DEFAULT_SIZE 20000

typedef struct NlVocab NlVocab;

/* From tokens[i] seen counts[i] times (n distinct tokens, any order):
 * the tokens seen at least min_count times (0 = 1), most frequent first,
 * at most vocab_size entries in all with the two specials (0 = 20000;
 * otherwise at least 2). NULL with an NL_DATA_ERROR_SPEC error for a bad
 * vocab_size or min_count. */
NlVocab *nl_vocab_build_from_counts (NlTokenizerKind kind, const char *const *tokens, const int64_t *counts,
                                     gsize n, int vocab_size, int min_count, GError **error);

/* The same from n texts (n < 0: texts is NULL-terminated), tokenized with
 * kind. Invalid UTF-8 is an error naming the text's index. */
NlVocab *nl_vocab_build (NlTokenizerKind kind, const char *const *texts, gssize n, int vocab_size, int min_count,
                         GError **error);

NlVocab *nl_vocab_ref (NlVocab *v);
void nl_vocab_unref (NlVocab *v);

NlTokenizerKind nl_vocab_kind (const NlVocab *v);
/* Entries, the specials included. */
int nl_vocab_size (const NlVocab *v);
/* Token of id, or NULL when id is out of range. */
const char *nl_vocab_token (const NlVocab *v, int id);
/* Id of token, or NL_VOCAB_UNK. */
int nl_vocab_lookup (const NlVocab *v, const char *token);

/* Tokenizes text with the vocabulary's tokenizer and writes the first
 * max_len ids (as floats) to ids, padding with 0 up to max_len. Returns the
 * number of ids written before the padding (min (tokens, max_len)); the
 * number of tokens before truncation into *n_tokens_before_truncation (may
 * be NULL). Invalid UTF-8 is read as g_utf8_make_valid reads it (U+FFFD),
 * so typed text never fails. */
int nl_vocab_encode (const NlVocab *v, const char *text, int max_len, float *ids, int *n_tokens_before_truncation);

/* ids back to text: word tokens joined by single spaces, char tokens
 * concatenated; <pad> ids are skipped, ids out of range read as "<unk>". */
char *nl_vocab_decode (const NlVocab *v, const float *ids, int n);

/* {"format":"netloom.vocab","version":1,"tokenizer":"word","tokens":["<pad>","<unk>",...]}
 * with the tokens in id order. */
char *nl_vocab_to_json (const NlVocab *v);
/* The strict reader: anything but that form (other members, another
 * format or version, an unknown tokenizer, a token that is not a
 * non-empty string, a duplicate, the specials out of place, a char
 * vocabulary's token of more than one character) is refused with one
 * NL_DATA_ERROR_CORRUPT message "not a netloom vocabulary: WHY". */
NlVocab *nl_vocab_from_json (const char *json, gssize len, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlVocab, nl_vocab_unref)

G_END_DECLS
