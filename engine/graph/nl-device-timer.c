/* nl-device-timer.c — see nl-device-timer.h. Not run by the test suite
 * where no GPU is present (the CPU backend has no marks). */
#include "engine/graph/nl-device-timer.h"

typedef struct {
  void *from, *to;
  const char *node, *op;
  NlTracePass pass;
  gint64 step;
} Pair;

struct NlDeviceTimer {
  NlBackend *b;
  GArray *pairs;   /* Pair */
  void *base;      /* the first mark since the last flush */
  gint64 base_us;  /* the host's clock when it was queued */
};

NlDeviceTimer *
nl_device_timer_new (NlBackend *b)
{
  NlDeviceTimer *t;
  if (!b->iface->mark || !b->iface->mark_elapsed || !b->iface->mark_free)
    return NULL;
  t = g_new0 (NlDeviceTimer, 1);
  t->b = b;
  t->pairs = g_array_new (FALSE, FALSE, sizeof (Pair));
  return t;
}

void
nl_device_timer_free (NlDeviceTimer *t)
{
  if (!t)
    return;
  nl_device_timer_flush (t, NULL);
  g_array_unref (t->pairs);
  g_free (t);
}

void *
nl_device_timer_begin (NlDeviceTimer *t)
{
  if (!t->base)
    {
      t->base_us = g_get_monotonic_time ();
      t->base = t->b->iface->mark (t->b, NULL);
      if (!t->base)
        return NULL;
    }
  return t->b->iface->mark (t->b, NULL);
}

void
nl_device_timer_end (NlDeviceTimer *t, void *begin, const char *node, const char *op, NlTracePass pass,
                     gint64 step)
{
  Pair pr = { begin, t->b->iface->mark (t->b, NULL), node, op, pass, step };
  if (!pr.to)
    {
      t->b->iface->mark_free (t->b, begin);
      return;
    }
  g_array_append_val (t->pairs, pr);
}

void
nl_device_timer_op_done (NlDeviceTimer *t, NlTrace *trace, void *mark, const NlGraphNode *node, gboolean forward,
                         gint64 step, gint64 t0)
{
  NlTracePass pass = forward ? NL_TRACE_PASS_FORWARD : NL_TRACE_PASS_BACKWARD;
  nl_trace_add_op (trace, node->id, node->def->name, pass, FALSE, step, t0, g_get_monotonic_time ());
  if (mark)
    nl_device_timer_end (t, mark, g_intern_string (node->id), g_intern_string (node->def->name), pass, step);
}

void
nl_device_timer_flush (NlDeviceTimer *t, NlTrace *trace)
{
  if (!t)
    return;
  for (guint i = 0; i < t->pairs->len; i++)
    {
      Pair *pr = &g_array_index (t->pairs, Pair, i);
      float start_ms, ms;
      if (trace && t->b->iface->mark_elapsed (t->b, t->base, pr->from, &start_ms, NULL)
          && t->b->iface->mark_elapsed (t->b, pr->from, pr->to, &ms, NULL))
        {
          gint64 t0 = t->base_us + (gint64) (start_ms * 1e3);
          nl_trace_add_op (trace, pr->node, pr->op, pr->pass, TRUE, pr->step, t0, t0 + (gint64) (ms * 1e3));
        }
      t->b->iface->mark_free (t->b, pr->from);
      t->b->iface->mark_free (t->b, pr->to);
    }
  g_array_set_size (t->pairs, 0);
  if (t->base)
    t->b->iface->mark_free (t->b, t->base);
  t->base = NULL;
}
