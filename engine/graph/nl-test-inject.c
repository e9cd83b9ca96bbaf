/* nl-test-inject.c — a NaN or Inf put where a test asks. */
#include "engine/graph/nl-test-inject.h"

#include <math.h>
#include <string.h>

void
nl_test_inject_parse (NlTestInject *in, const NlGraph *g, gboolean allowed)
{
  const char *env = g_getenv ("NETLOOM_TEST_NONFINITE");
  g_auto (GStrv) f = NULL;
  in->node = -1;
  if (!allowed || !env)
    return;
  f = g_strsplit (env, ":", 4);
  if (g_strv_length (f) != 4)
    return;
  for (guint i = 0; i < g->nodes->len; i++)
    if (!g_strcmp0 (nl_graph_node (g, i)->id, f[0]))
      in->node = (int) i;
  in->forward = !strcmp (f[1], "forward");
  in->value = !strcmp (f[2], "nan") ? NAN : INFINITY;
  in->step = g_ascii_strtoull (f[3], NULL, 10);
}

void
nl_test_inject_apply (const NlTestInject *in, int node, gboolean forward, guint64 step, NlTensor *const *written,
                      int n)
{
  if (node != in->node || forward != in->forward || step < in->step)
    return;
  for (int k = 0; k < n; k++)
    if (written[k] && nl_tensor_numel (written[k]) > 0)
      {
        nl_tensor_f32 (written[k])[0] = in->value;
        return;
      }
}
