/* nl-explain-source.c — a run's checkpoint opened lazily for explaining
 * (see nl-explain-source.h). */
#include "ui/experiments/nl-explain-source.h"

#include "engine/graph/nl-graph.h"
#include "engine/session/nl-run-model.h"

#include <string.h>

struct NlExplainSource {
  gatomicrefcount ref;
  NlWorkspace *ws;      /* keeps the project open */
  gint64 run;
  char *which;
  GMutex lock;          /* ex, ev and every call on them */
  NlExplainer *ex;
  NlEvaluation *ev;
  char **spatial;       /* the layers with feature maps, once listed */
  gboolean listed;
};

NlExplainSource *
nl_explain_source_new (NlWorkspace *ws, gint64 run, const char *which)
{
  NlExplainSource *s = g_new0 (NlExplainSource, 1);
  g_return_val_if_fail (NL_IS_WORKSPACE (ws), NULL);
  g_atomic_ref_count_init (&s->ref);
  s->ws = g_object_ref (ws);
  s->run = run;
  s->which = g_strdup (which ? which : "best");
  g_mutex_init (&s->lock);
  return s;
}

NlExplainSource *
nl_explain_source_ref (NlExplainSource *s)
{
  g_atomic_ref_count_inc (&s->ref);
  return s;
}

void
nl_explain_source_unref (NlExplainSource *s)
{
  if (!s || !g_atomic_ref_count_dec (&s->ref))
    return;
  g_clear_pointer (&s->ex, nl_explainer_free);
  g_clear_pointer (&s->ev, nl_evaluation_free);
  g_strfreev (s->spatial);
  g_mutex_clear (&s->lock);
  g_free (s->which);
  g_object_unref (s->ws);
  g_free (s);
}

gint64
nl_explain_source_get_run (const NlExplainSource *s)
{
  return s->run;
}

NlExplainer *
nl_explain_source_lock (NlExplainSource *s, NlEvaluation **ev, GError **error)
{
  NlProject *p = nl_workspace_get_project (s->ws);
  g_mutex_lock (&s->lock);
  if (!s->ev)
    s->ev = nl_evaluation_open (p, s->run, s->which, NULL, TRUE, NULL);
  /* without its test data on this computer an image file can still be explained */
  if (!s->ev)
    s->ev = nl_evaluation_open (p, s->run, s->which, NULL, FALSE, error);
  if (s->ev && !s->ex)
    s->ex = nl_explainer_new (p, s->run, s->which, error);
  if (!s->ev || !s->ex)
    {
      g_mutex_unlock (&s->lock);
      return NULL;
    }
  if (ev)
    *ev = s->ev;
  return s->ex;
}

void
nl_explain_source_unlock (NlExplainSource *s)
{
  g_mutex_unlock (&s->lock);
}

float *
nl_explain_source_normalise (const NlEvaluation *ev, const float *pixels)
{
  int64_t n = nl_shape_numel (&ev->sample_shape);
  float *x = g_new (float, n);
  float std = ev->std > 0 ? ev->std : 1;
  for (int64_t i = 0; i < n; i++)
    x[i] = (pixels[i] - ev->mean) / std;
  return x;
}

gboolean
nl_explain_source_sample (NlEvaluation *ev, int64_t index, float **pixels, float **input, GError **error)
{
  g_autofree float *x = g_new (float, nl_shape_numel (&ev->sample_shape));
  if (!nl_evaluation_get_sample (ev, index, x, NULL, error))
    return FALSE;
  if (input)
    *input = nl_explain_source_normalise (ev, x);
  if (pixels)
    *pixels = g_steal_pointer (&x);
  return TRUE;
}

const char *const *
nl_explain_source_spatial_layers (NlExplainSource *s)
{
  if (!s->listed)
    {
      g_auto (GStrv) all = NULL;
      s->listed = TRUE;
      if (!nl_explain_source_list_layers (s, &s->spatial, &all, NULL))
        s->spatial = NULL;
    }
  return (const char *const *) s->spatial;
}

gboolean
nl_explain_source_list_layers (NlExplainSource *s, char ***spatial, char ***all, GError **error)
{
  g_auto (NlRunModel) m = { 0 };
  NlCompileOptions opts = { .batch = 1, .training = FALSE, .loss = NULL };
  g_autoptr (NlGraph) g = NULL;
  g_autoptr (GStrvBuilder) sb = g_strv_builder_new (), ab = g_strv_builder_new ();

  if (!nl_run_model_load (&m, nl_workspace_get_project (s->ws), s->run, s->which, NULL, FALSE, error))
    return FALSE;
  g = nl_graph_compile (m.net, &m.sample_shape, &opts, error);
  if (!g)
    return FALSE;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *n = nl_graph_node (g, (int) i);
      const NlShape *out = n->out >= 0 ? &nl_graph_value (g, n->out)->shape : NULL;
      if (!out || n->net_index < 0 || !strcmp (n->def->name, "Input"))
        continue;  /* the input itself, an appended loss */
      g_strv_builder_add (ab, n->id);
      /* (N, C, H, W) with more than one spatial position */
      if (out->ndim == 4 && out->d[2] * out->d[3] > 1)
        g_strv_builder_add (sb, n->id);
    }
  *spatial = g_strv_builder_end (sb);
  *all = g_strv_builder_end (ab);
  return TRUE;
}
