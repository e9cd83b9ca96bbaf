/* nl-generate-box.h — text from a language-model run (dataset text-lm:):
 * a prompt, how many tokens, the temperature and the seed, Generate and
 * Stop, and the text as it comes, token by token. Generation
 * (engine/session/nl-generate.h) runs on a worker thread; each token's
 * text is handed to the main loop as it is sampled; Stop cancels it (the
 * text so far stays). The same run, prompt, temperature and seed give the
 * same text. The evaluation window shows it for language-model runs. */
#pragma once

#include <adwaita.h>

#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_GENERATE_BOX (nl_generate_box_get_type ())
G_DECLARE_FINAL_TYPE (NlGenerateBox, nl_generate_box, NL, GENERATE_BOX, AdwBin)

GtkWidget *nl_generate_box_new (void);
/* The run to generate with (stops a generation under way). */
void nl_generate_box_set_run (NlGenerateBox *b, NlWorkspace *ws, gint64 run);
/* What Generate does: starts with the fields' values; FALSE when no run is
 * set or one is under way. */
gboolean nl_generate_box_start (NlGenerateBox *b);
/* What Stop does. */
void nl_generate_box_stop (NlGenerateBox *b);
gboolean nl_generate_box_is_running (NlGenerateBox *b);
/* The generated text shown (g_free), the prompt not included. */
char *nl_generate_box_dup_text (NlGenerateBox *b);
/* Tokens received in the current (or last) generation. */
int nl_generate_box_get_n_tokens (NlGenerateBox *b);
/* "prompt" (GtkEntry), "tokens", "temperature", "seed" (GtkSpinButton),
 * "generate", "stop" (GtkButton), "output" (GtkTextView), "status" (GtkLabel). */
GtkWidget *nl_generate_box_get_part (NlGenerateBox *b, const char *part);

G_END_DECLS
