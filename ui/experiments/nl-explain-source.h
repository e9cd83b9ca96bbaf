/* nl-explain-source.h — what the Explain overlay and the activation viewer
 * share: one run's checkpoint, opened lazily on a worker thread as an
 * NlExplainer (maps, activations, projections) and an NlEvaluation (its
 * test samples, class names, predictions), behind one lock because an
 * explainer serves one thread at a time. Reference counted, so a task that
 * outlives the widget that started it keeps what it uses. */
#pragma once

#include "engine/session/nl-evaluate.h"
#include "engine/session/nl-explain.h"
#include "ui/nl-workspace.h"

G_BEGIN_DECLS

typedef struct NlExplainSource NlExplainSource;

/* Checkpoint `which` ("best", "last", an epoch; NULL: "best") of RUN.
 * Opens nothing yet: the first nl_explain_source_lock does, off the main loop. */
NlExplainSource *nl_explain_source_new (NlWorkspace *ws, gint64 run, const char *which);
NlExplainSource *nl_explain_source_ref (NlExplainSource *s);
void nl_explain_source_unref (NlExplainSource *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlExplainSource, nl_explain_source_unref)

gint64 nl_explain_source_get_run (const NlExplainSource *s);

/* Worker threads: takes the lock and opens the explainer and the
 * evaluation if not yet open (without the test split when it is not on
 * this computer: nl_evaluation_n_samples is then 0); *ev (may be NULL)
 * receives the evaluation.
 * NULL (lock released) with the error naming what did not open. Pair with
 * nl_explain_source_unlock. */
NlExplainer *nl_explain_source_lock (NlExplainSource *s, NlEvaluation **ev, GError **error);
void nl_explain_source_unlock (NlExplainSource *s);

/* Worker threads, lock held: sample INDEX of the test split as the dataset
 * gives it (*pixels, in [0, 1], for showing) and normalised as the run's
 * pipeline does (*input, for the explainer); both g_free. */
gboolean nl_explain_source_sample (NlEvaluation *ev, int64_t index, float **pixels, float **input, GError **error);
/* pixels in [0, 1] normalised as the run's pipeline does (g_free). */
float *nl_explain_source_normalise (const NlEvaluation *ev, const float *pixels);

/* Worker threads, lock held: nl_explain_source_list_layers's spatial list,
 * listed once and kept (NULL when it cannot be listed). */
const char *const *nl_explain_source_spatial_layers (NlExplainSource *s);

/* Worker threads (no lock needed): the run's nodes, in execution order,
 * whose output is a (C, H, W) feature map (spatial) or anything but the
 * input (all), as NULL-terminated id lists (g_strfreev). */
gboolean nl_explain_source_list_layers (NlExplainSource *s, char ***spatial, char ***all, GError **error);

G_END_DECLS
