/* nl-test-inject.h — NETLOOM_TEST_NONFINITE=NODE:forward|backward:nan|inf:STEP,
 * for tests of the search for the first NaN (nl-layer-stats.h): that node's
 * output (forward), or the first gradient it writes (backward), gets one
 * NaN or Inf on every step from STEP on. Training programs on the CPU only. */
#pragma once

#include "engine/graph/nl-graph.h"

G_BEGIN_DECLS

typedef struct {
  int node;                /* -1: none asked */
  gboolean forward;
  float value;
  guint64 step;
} NlTestInject;

/* From the environment, for graph g (nothing unless `allowed`). */
void nl_test_inject_parse (NlTestInject *in, const NlGraph *g, gboolean allowed);
/* After node's op ran at step: what it wrote (nl_program_set_step_hook's view). */
void nl_test_inject_apply (const NlTestInject *in, int node, gboolean forward, guint64 step, NlTensor *const *written,
                           int n);

G_END_DECLS
