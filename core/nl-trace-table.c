/* nl-trace-table.c — see nl-trace-table.h. */
#include "core/nl-trace-table.h"
#include "core/nl-json-doc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK (nl-trace-table-error-quark, nl_trace_table_error)

/* One op event as read */
typedef struct {
  const char *node, *op;
  double dur_us;
  gint64 step;
  gboolean device;
} OpEvent;

static gboolean G_GNUC_PRINTF (4, 5)
bad_event (GError **error, const char *what, gint64 index, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *why = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, NL_TRACE_TABLE_ERROR, NL_TRACE_TABLE_ERROR_INVALID, "%s: traceEvents[%" G_GINT64_FORMAT "]: %s",
               what, index, why);
  return FALSE;
}

static gboolean
is_number (const NlJsonValue *v)
{
  return v && (v->type == NL_JSON_INT || v->type == NL_JSON_DOUBLE);
}

static const char *
string_member (const NlJsonValue *o, const char *name)
{
  const NlJsonValue *v = nl_json_member (o, name);
  return v && v->type == NL_JSON_STRING ? v->s : NULL;
}

/* An op event's args: node, op, pass and (optional) step. */
static gboolean
read_op_args (const NlJsonValue *ev, OpEvent *oe, const char *what, gint64 index, GError **error)
{
  const NlJsonValue *args = nl_json_member (ev, "args"), *step;
  const char *pass;
  if (!args || args->type != NL_JSON_OBJECT)
    return bad_event (error, what, index, "an op event needs an \"args\" object");
  oe->node = string_member (args, "node");
  oe->op = string_member (args, "op");
  pass = string_member (args, "pass");
  if (!oe->node || !oe->op)
    return bad_event (error, what, index, "an op event's args need \"node\" and \"op\" strings");
  if (!pass || (strcmp (pass, "forward") && strcmp (pass, "backward")))
    return bad_event (error, what, index, "an op event's \"pass\" must be \"forward\" or \"backward\"");
  step = nl_json_member (args, "step");
  if (step && step->type != NL_JSON_INT)
    return bad_event (error, what, index, "an op event's \"step\" must be a whole number");
  oe->step = step ? step->i : -1;
  return TRUE;
}

/* Checks one event; an op event goes to ops. */
static gboolean
read_event (const NlJsonValue *ev, GArray *ops, gint64 *complete, const char *what, gint64 index, GError **error)
{
  const NlJsonValue *ts, *dur;
  const char *ph, *cat;
  OpEvent oe = { 0 };
  if (ev->type != NL_JSON_OBJECT)
    return bad_event (error, what, index, "not an object");
  if (!(ph = string_member (ev, "ph")))
    return bad_event (error, what, index, "no \"ph\" string");
  if (strcmp (ph, "X"))
    return TRUE;
  ts = nl_json_member (ev, "ts");
  dur = nl_json_member (ev, "dur");
  if (!string_member (ev, "name"))
    return bad_event (error, what, index, "no \"name\" string");
  if (!is_number (ts))
    return bad_event (error, what, index, "\"ts\" is missing or not a number");
  if (!is_number (dur) || !(nl_json_number (dur) >= 0))
    return bad_event (error, what, index, "\"dur\" is missing or not a number >= 0");
  if (!is_number (nl_json_member (ev, "pid")) || !is_number (nl_json_member (ev, "tid")))
    return bad_event (error, what, index, "\"pid\" and \"tid\" must be numbers");
  if (nl_json_member (ev, "cat") && !string_member (ev, "cat"))
    return bad_event (error, what, index, "\"cat\" is not a string");
  cat = string_member (ev, "cat");
  (*complete)++;
  if (!cat || (strcmp (cat, "op") && strcmp (cat, "device")))
    return TRUE;
  if (!read_op_args (ev, &oe, what, index, error))
    return FALSE;
  oe.dur_us = nl_json_number (dur);
  oe.device = !strcmp (cat, "device");
  g_array_append_val (ops, oe);
  return TRUE;
}

static int
row_cmp (gconstpointer a, gconstpointer b)
{
  const NlTraceRow *x = a, *y = b;
  if (x->total_ms != y->total_ms)
    return x->total_ms > y->total_ms ? -1 : 1;
  return strcmp (x->name, y->name);
}

/* Sums the op events of the chosen kind by key (node or op type). */
static GArray *
aggregate (NlTraceTable *t, GArray *ops, gboolean by_node)
{
  GArray *rows = g_array_new (FALSE, TRUE, sizeof (NlTraceRow));
  g_autoptr (GHashTable) index = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < ops->len; i++)
    {
      const OpEvent *e = &g_array_index (ops, OpEvent, i);
      const char *key = by_node ? e->node : e->op;
      gpointer at;
      NlTraceRow *r;
      if (e->device != t->device)
        continue;
      if (!g_hash_table_lookup_extended (index, key, NULL, &at))
        {
          NlTraceRow nr = { .name = g_string_chunk_insert_const (t->strings, key),
                            .op = g_string_chunk_insert_const (t->strings, e->op) };
          at = GUINT_TO_POINTER (rows->len);
          g_hash_table_insert (index, (gpointer) nr.name, at);
          g_array_append_val (rows, nr);
        }
      r = &g_array_index (rows, NlTraceRow, GPOINTER_TO_UINT (at));
      r->calls++;
      r->total_ms += e->dur_us / 1e3;
    }
  for (guint i = 0; i < rows->len; i++)
    {
      NlTraceRow *r = &g_array_index (rows, NlTraceRow, i);
      r->mean_ms = r->total_ms / r->calls;
      r->share = t->total_ms > 0 ? r->total_ms / t->total_ms : 0;
    }
  g_array_sort (rows, row_cmp);
  return rows;
}

static void
summarise (NlTraceTable *t, GArray *ops)
{
  g_autoptr (GHashTable) steps = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (guint i = 0; i < ops->len; i++)
    t->device = t->device || g_array_index (ops, OpEvent, i).device;
  for (guint i = 0; i < ops->len; i++)
    {
      OpEvent *e = &g_array_index (ops, OpEvent, i);
      if (e->device != t->device)
        continue;
      t->total_ms += e->dur_us / 1e3;
      if (e->step >= 0)
        g_hash_table_add (steps, &e->step);
    }
  t->steps = g_hash_table_size (steps);
  t->layers = aggregate (t, ops, TRUE);
  t->ops = aggregate (t, ops, FALSE);
}

NlTraceTable *
nl_trace_table_parse (const char *text, gsize length, const char *what, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (NlJsonDoc) doc = nl_json_doc_parse (text, (gssize) length, &local);
  g_autoptr (GArray) ops = g_array_new (FALSE, FALSE, sizeof (OpEvent));
  const NlJsonValue *root, *events;
  NlTraceTable *t;
  gint64 index = 0, complete = 0;

  if (!doc)
    {
      g_set_error (error, NL_TRACE_TABLE_ERROR, NL_TRACE_TABLE_ERROR_INVALID, "%s is not JSON: %s", what,
                   local->message);
      return NULL;
    }
  root = nl_json_doc_root (doc);
  events = root->type == NL_JSON_OBJECT ? nl_json_member (root, "traceEvents") : NULL;
  if (!events || events->type != NL_JSON_ARRAY)
    {
      g_set_error (error, NL_TRACE_TABLE_ERROR, NL_TRACE_TABLE_ERROR_INVALID,
                   "%s is not a trace: it needs a \"traceEvents\" array in a JSON object", what);
      return NULL;
    }
  for (const NlJsonValue *ev = nl_json_first (events); ev; ev = nl_json_next (events, ev), index++)
    if (!read_event (ev, ops, &complete, what, index, error))
      return NULL;
  t = g_new0 (NlTraceTable, 1);
  t->strings = g_string_chunk_new (1024);
  t->events = complete;
  summarise (t, ops);
  return t;
}

NlTraceTable *
nl_trace_table_load (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize length;
  g_autoptr (GError) local = NULL;
  if (!g_file_get_contents (path, &text, &length, &local))
    {
      g_set_error (error, NL_TRACE_TABLE_ERROR, NL_TRACE_TABLE_ERROR_READ, "%s", local->message);
      return NULL;
    }
  return nl_trace_table_parse (text, length, path, error);
}

void
nl_trace_table_free (NlTraceTable *t)
{
  if (!t)
    return;
  if (t->layers)
    g_array_unref (t->layers);
  if (t->ops)
    g_array_unref (t->ops);
  if (t->strings)
    g_string_chunk_free (t->strings);
  g_free (t);
}
