/* nl-step-graph.c — record a step once, replay it (see nl-step-graph.h). */
#include "engine/graph/nl-step-graph.h"

struct NlStepGraph {
  NlBackend *backend;
  gboolean active;    /* on, the backend records, no recording failed */
  int warmup;
  void *graph;        /* the recorded step, NULL before the first */
  int graph_n;
  guint64 graph_key;
  int streak;         /* plain steps in a row with streak_n, streak_key */
  int streak_n;
  guint64 streak_key;
  guint64 replays;
};

NlStepGraph *
nl_step_graph_new (NlBackend *b, gboolean enabled, int warmup)
{
  NlStepGraph *g = g_new0 (NlStepGraph, 1);
  const NlBackendInterface *i = b->iface;
  g->backend = b;
  g->active = enabled && i->graph_begin && i->graph_end && i->graph_replay && i->graph_free;
  g->warmup = MAX (warmup, 0);
  return g;
}

NlStepGraph *
nl_step_graph_new_for_program (NlProgram *p)
{
  const NlCompileOptions *o = &nl_program_get_graph (p)->opts;
  NlBackend *b = nl_backend_get (o->device, NULL);
  /* the program exists, so its device's backend does */
  g_return_val_if_fail (b != NULL, NULL);
  return nl_step_graph_new (b, o->training && o->device_graphs, NL_STEP_GRAPH_WARMUP);
}

void
nl_step_graph_free (NlStepGraph *g)
{
  if (!g)
    return;
  if (g->graph)
    g->backend->iface->graph_free (g->backend, g->graph);
  g_free (g);
}

gboolean
nl_step_graph_active (const NlStepGraph *g)
{
  return g->active;
}

guint64
nl_step_graph_replays (const NlStepGraph *g)
{
  return g->replays;
}

/* A recording that failed: graphs off, the step run plainly. */
static gboolean
record_failed (NlStepGraph *g, GError *why, NlStepGraphFn fn, gpointer user, GError **error)
{
  g_warning ("the training step could not be recorded as a %s graph (%s): running it op by op from now on",
             g->backend->iface->name, why->message);
  g_error_free (why);
  g->active = FALSE;
  return fn (user, error);
}

/* Records fn as the graph for (n, key) and launches it once. */
static gboolean
record (NlStepGraph *g, int n, guint64 key, NlStepGraphFn fn, gpointer user, GError **error)
{
  const NlBackendInterface *i = g->backend->iface;
  GError *why = NULL;
  if (!i->graph_begin (g->backend, &why))
    return record_failed (g, why, fn, user, error);
  if (!fn (user, error))
    {
      /* fn's own failure: end the recording, keep nothing of it */
      void *partial = i->graph_end (g->backend, NULL);
      if (partial)
        i->graph_free (g->backend, partial);
      return FALSE;
    }
  void *graph = i->graph_end (g->backend, &why);
  if (!graph)
    return record_failed (g, why, fn, user, error);
  if (g->graph)
    i->graph_free (g->backend, g->graph);
  g->graph = graph;
  g->graph_n = n;
  g->graph_key = key;
  g->replays++;
  return i->graph_replay (g->backend, g->graph, error);
}

gboolean
nl_step_graph_run (NlStepGraph *g, int n, guint64 key, NlStepGraphFn fn, gpointer user, GError **error)
{
  if (!g->active)
    return fn (user, error);
  if (g->graph && n == g->graph_n && key == g->graph_key)
    {
      /* other pairs' warm-ups count consecutive steps: an epoch's partial
       * batch, once between replays, never replaces the graph */
      g->streak = 0;
      g->replays++;
      return g->backend->iface->graph_replay (g->backend, g->graph, error);
    }
  if (g->streak > 0 && n == g->streak_n && key == g->streak_key)
    g->streak++;
  else
    {
      g->streak = 1;
      g->streak_n = n;
      g->streak_key = key;
    }
  if (g->streak <= g->warmup)
    return fn (user, error);
  g->streak = 0;
  return record (g, n, key, fn, user, error);
}
