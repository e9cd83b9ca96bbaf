/* nl-text-predict.h — classify typed text with a text run's model: an
 * entry, Classify, and the per-class scores as sorted bars. The model of
 * the run's checkpoint is opened on a worker thread at the first
 * classification and kept; each text is encoded with the run's vocabulary
 * as training saw its samples (nl_evaluation_predict_text) off the main
 * loop. The evaluation view shows it for text runs. */
#pragma once

#include <adwaita.h>

#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_TEXT_PREDICT (nl_text_predict_get_type ())
G_DECLARE_FINAL_TYPE (NlTextPredict, nl_text_predict, NL, TEXT_PREDICT, AdwBin)

GtkWidget *nl_text_predict_new (void);
/* Checkpoint `which` ("best", "last", an epoch) of RUN; drops the model
 * of the one before. */
void nl_text_predict_set_run (NlTextPredict *tp, NlWorkspace *ws, gint64 run, const char *which);
/* What Classify does with TEXT (put in the entry; NULL: the entry's); FALSE when no
 * run is set. A text typed while one is classified is classified next. */
gboolean nl_text_predict_classify (NlTextPredict *tp, const char *text);
gboolean nl_text_predict_is_busy (NlTextPredict *tp);
/* "entry" (GtkEntry), "classify" (GtkButton), "scores" (GtkBox: a row per
 * class, most likely first: a name label, a bar, a percentage label),
 * "message" (GtkLabel: errors). */
GtkWidget *nl_text_predict_get_part (NlTextPredict *tp, const char *part);

G_END_DECLS
