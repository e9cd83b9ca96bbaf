/* nl-generate.c — sampling text from a language-model run (nl-generate.h). */
#include "engine/session/nl-generate.h"
#include "engine/session/nl-eval-runner.h"
#include "engine/session/nl-run-model.h"

#include <math.h>
#include <string.h>

#define MAX_TOKENS 100000

/* The next id from one position's V scores: the most likely one at
 * temperature 0, else drawn from softmax (scores / temperature). Ids 0
 * (<pad>) and 1 (<unk>) are left out. */
static int
sample_next (const float *scores, int V, double temperature, GRand *rng)
{
  int best = NL_VOCAB_UNK + 1;
  for (int j = best; j < V; j++)
    if (scores[j] > scores[best])
      best = j;
  if (temperature <= 0)
    return best;
  double sum = 0, max = scores[best];
  g_autofree double *w = g_new (double, V);
  for (int j = NL_VOCAB_UNK + 1; j < V; j++)
    sum += w[j] = exp (((double) scores[j] - max) / temperature);
  double u = g_rand_double (rng) * sum;
  for (int j = NL_VOCAB_UNK + 1; j < V; j++)
    if ((u -= w[j]) < 0)
      return j;
  return best;   /* rounding left u a hair above 0 */
}

/* A token's text as it follows others: words after a space. */
static char *
piece_of (const NlVocab *v, int id)
{
  const char *tok = nl_vocab_token (v, id);
  return nl_vocab_kind (v) == NL_TOKENIZER_WORD ? g_strconcat (" ", tok, NULL) : g_strdup (tok);
}

static gboolean
check_args (gint64 run, const NlVocab *vocab, int tokens, double temperature, GError **error)
{
  const char *why = !vocab ? "was not trained on text: it has no vocabulary to generate with"
                    : tokens < 1 || tokens > MAX_TOKENS ? "can generate 1 to 100000 tokens at a time"
                    : !(temperature >= 0 && isfinite (temperature)) ? "needs a temperature of 0 or more" : NULL;
  if (!why)
    return TRUE;
  g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "run %" G_GINT64_FORMAT " %s", run, why);
  return FALSE;
}

/* The prompt's ids, the last T of them at the start of ctx; their count. */
static int
prompt_ids (const NlVocab *v, const char *prompt, float *ctx, int T)
{
  int n_all = 0;
  nl_vocab_encode (v, prompt, 0, NULL, &n_all);
  g_autofree float *all = g_new0 (float, MAX (n_all, 1));
  nl_vocab_encode (v, prompt, n_all, all, NULL);
  int n = MIN (n_all, T), from = n_all - n;
  memset (ctx, 0, sizeof (float) * T);
  memcpy (ctx, all + from, sizeof (float) * n);
  return n;
}

char *
nl_generate_text_full (NlProject *p, gint64 run, const char *prompt, int tokens, double temperature, guint64 seed,
                       NlGenerateTokenFunc fn, gpointer user_data, GCancellable *cancel, GError **error)
{
  g_auto (NlRunModel) l = { 0 };
  g_return_val_if_fail (p != NULL && prompt != NULL, NULL);
  if (!nl_run_model_load (&l, p, run, NULL, NULL, FALSE, error) || !check_args (run, l.vocab, tokens, temperature, error))
    return NULL;
  g_autoptr (NlEvalRunner) runner = nl_eval_runner_new (l.model, 1, NULL, error);
  if (!runner)
    return NULL;
  int T = (int) nl_shape_numel (&l.sample_shape), out = (int) nl_eval_runner_classes (runner);
  int V = MIN (out / MAX (T, 1), nl_vocab_size (l.vocab));
  if (T < 1 || out % T != 0 || V <= NL_VOCAB_UNK + 1)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "run %" G_GINT64_FORMAT "'s network does not score each of its %d steps over the vocabulary "
                   "(it outputs %d values): it is no language model", run, T, out);
      return NULL;
    }
  /* the window, kept here: a run may reuse its input's memory */
  g_autofree float *ctx = g_new0 (float, T);
  int n = prompt_ids (l.vocab, prompt, ctx, T);
  if (n == 0)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the prompt has no token to start from");
      return NULL;
    }
  /* the 64 bits of the seed, both halves */
  guint32 words[2] = { (guint32) seed, (guint32) (seed >> 32) };
  g_autoptr (GRand) rng = g_rand_new_with_seed_array (words, 2);
  g_autofree float *ids = g_new (float, tokens);
  int made = 0;
  for (; made < tokens; made++)
    {
      memcpy (nl_tensor_f32 (nl_eval_runner_input (runner)), ctx, sizeof (float) * T);
      if (g_cancellable_set_error_if_cancelled (cancel, error) || !nl_eval_runner_run (runner, 1, error))
        return NULL;
      int next = sample_next (nl_eval_runner_output (runner) + (gsize) (n - 1) * (out / T), V, temperature, rng);
      ids[made] = (float) next;
      if (n == T)
        memmove (ctx, ctx + 1, sizeof (float) * (T - 1));
      else
        n++;
      ctx[n - 1] = (float) next;
      g_autofree char *piece = fn ? piece_of (l.vocab, next) : NULL;
      if (fn && !fn (piece, user_data))
        {
          made++;
          break;
        }
    }
  g_autofree char *text = nl_vocab_decode (l.vocab, ids, made);
  /* words follow the prompt after a space, as the pieces say */
  return nl_vocab_kind (l.vocab) == NL_TOKENIZER_WORD ? g_strconcat (" ", text, NULL) : g_steal_pointer (&text);
}

char *
nl_generate_text (NlProject *p, gint64 run, const char *prompt, int tokens, double temperature, guint64 seed,
                  GCancellable *cancel, GError **error)
{
  return nl_generate_text_full (p, run, prompt, tokens, temperature, seed, NULL, NULL, cancel, error);
}
