/* nl-generate.h — text from a language-model run (text-lm: data, e.g. the
 * char-gpt template): the run's best checkpoint (else its last) predicts
 * the next token of the last max_length tokens of prompt and text so far,
 * one at a time, batch 1. Sampling uses its own RNG seeded with `seed`,
 * so the same run, prompt, temperature and seed give the same text;
 * temperature 0 takes the most likely token. <pad> and <unk> are never
 * sampled (<pad> would end the context, <unk> says nothing). */
#pragma once

#include <gio/gio.h>

#include "projects/nl-project.h"

G_BEGIN_DECLS

/* Called with each new token's text as it is sampled ("e", or " the" for
 * a word vocabulary: words are joined by spaces); FALSE stops early (the
 * text so far is returned). Runs on the generating thread: the GUI runs
 * generation off its main loop and hands the pieces over. */
typedef gboolean (*NlGenerateTokenFunc) (const char *piece, gpointer user_data);

/* The `tokens` tokens (1..100000) after prompt, decoded (g_free), without
 * the prompt. Errors name the run: not a text run, a prompt of no token,
 * temperature < 0, cancelled. */
char *nl_generate_text (NlProject *p, gint64 run, const char *prompt, int tokens, double temperature, guint64 seed,
                        GCancellable *cancel, GError **error);
/* The same, calling fn (may be NULL) after each token. */
char *nl_generate_text_full (NlProject *p, gint64 run, const char *prompt, int tokens, double temperature,
                             guint64 seed, NlGenerateTokenFunc fn, gpointer user_data, GCancellable *cancel,
                             GError **error);

G_END_DECLS
