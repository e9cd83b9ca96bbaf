/* nl-explain-private.h — what nl-explain.c and nl-explain-batch.c share:
 * the explainer itself and its helpers. Not for other callers. */
#pragma once

#include "engine/graph/nl-program.h"
#include "engine/session/nl-explain.h"
#include "engine/session/nl-run-model.h"

G_BEGIN_DECLS

/* How the network's output becomes probabilities (as nl-evaluate.c). */
typedef enum { NL_OUT_LOGITS, NL_OUT_PROBS, NL_OUT_LOG_PROBS } NlExplainOutKind;

struct NlExplainer {
  NlRunModel l;          /* the run's model, network, settings and test split (NULL when absent) */
  gint64 run;
  NlProgram *prog;       /* batch 1, explain graph, naive memory: every value readable after a step */
  NlProgram *batch;      /* inference, naive memory, NL_EXPLAIN_BATCH samples; built on demand */
  int n_classes;
  NlExplainOutKind out_kind;
  int input_node;        /* graph node of the Input */
  char **class_names;
};

#define NL_EXPLAIN_BATCH 32

int nl_explainer_find_node (NlExplainer *e, const char *id);
int nl_explainer_grad_value (NlExplainer *e, int node);
gboolean nl_explainer_unknown_layer (NlExplainer *e, const char *layer, GError **error);
void nl_explainer_probs (NlExplainer *e, const float *x, float *out);
gboolean nl_explainer_forward (NlExplainer *e, const float *sample, int target, NlExplanation *out, GError **error);
void nl_explainer_input_hw (NlExplainer *e, int *h, int *w);
void nl_explain_normalise (float *map, int64_t n);
gboolean nl_explainer_occlusion (NlExplainer *e, const float *sample, const NlExplainOptions *o, NlExplanation *out,
                                 GError **error);

G_END_DECLS
