/* nl-run-vocab.h — a text run's vocabulary in its project (schema 6): the
 * training side's NlVocab stored before the run's first step, read back by
 * resume, fork, evaluate, predict, generate and export so they encode text
 * exactly as training did. */
#pragma once

#include "engine/data/nl-vocab.h"
#include "engine/train/nl-trainer.h"
#include "projects/nl-project.h"

G_BEGIN_DECLS

/* RUN's vocabulary (nl_vocab_unref), or NULL without an error when it has
 * none (a run of images or series). A stored vocabulary that does not read
 * is an error naming the run. */
NlVocab *nl_run_vocab_load (NlProject *p, gint64 run, GError **error);
/* Stores the vocabulary of t's training side as RUN's (nothing for a
 * dataset without one). */
gboolean nl_run_vocab_store (NlProject *p, gint64 run, NlTrainer *t, GError **error);

G_END_DECLS
