/* nl-trace.c — see nl-trace.h. */
#include "core/nl-trace.h"
#include "core/nl-atomic-file.h"

#include <pthread.h>
#include <unistd.h>

/* The device's track: not a thread, but Chrome's format wants a number. */
#define DEVICE_TID 100000

struct NlTrace {
  GMutex lock;
  GArray *events;      /* NlTraceEvent */
  GHashTable *threads; /* thread number -> its name (owned) */
  gint64 start_us;
  guint64 dropped;
};

/* Every thread gets a number once, for every trace (Chrome's "tid"). */
static gint next_tid = 1;
static __thread int thread_tid;

static int
current_tid (void)
{
  if (!thread_tid)
    thread_tid = g_atomic_int_add (&next_tid, 1);
  return thread_tid;
}

NlTrace *
nl_trace_new (void)
{
  NlTrace *t = g_new0 (NlTrace, 1);
  g_mutex_init (&t->lock);
  t->events = g_array_new (FALSE, FALSE, sizeof (NlTraceEvent));
  t->threads = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  t->start_us = g_get_monotonic_time ();
  return t;
}

void
nl_trace_free (NlTrace *t)
{
  if (!t)
    return;
  g_array_unref (t->events);
  g_hash_table_unref (t->threads);
  g_mutex_clear (&t->lock);
  g_free (t);
}

/* Under the lock: the event goes in, its thread named the first time
 * (GLib names its threads for the OS: "nl-sched-0", "nl-loader-1"). */
static void
add_locked (NlTrace *t, NlTraceEvent *e, gboolean device)
{
  if (t->events->len >= NL_TRACE_MAX_EVENTS)
    {
      t->dropped++;
      return;
    }
  e->tid = device ? DEVICE_TID : current_tid ();
  if (!g_hash_table_contains (t->threads, GINT_TO_POINTER (e->tid)))
    {
      char name[32] = "";
      if (device)
        g_strlcpy (name, "device", sizeof name);
      else if (pthread_getname_np (pthread_self (), name, sizeof name) != 0 || !name[0])
        g_snprintf (name, sizeof name, "thread %d", e->tid);
      g_hash_table_insert (t->threads, GINT_TO_POINTER (e->tid), g_strdup (name));
    }
  g_array_append_vals (t->events, e, 1);
}

void
nl_trace_add (NlTrace *t, const char *cat, const char *name, const char *arg_key, gint64 arg, gint64 t0, gint64 t1)
{
  NlTraceEvent e = { .name = g_intern_string (name), .cat = g_intern_string (cat), .arg_key = arg_key,
                     .arg = arg };
  g_mutex_lock (&t->lock);
  e.ts = t0 - t->start_us;
  e.dur = MAX (t1 - t0, 0);
  add_locked (t, &e, FALSE);
  g_mutex_unlock (&t->lock);
}

void
nl_trace_add_op (NlTrace *t, const char *node, const char *op, NlTracePass pass, gboolean device, gint64 step,
                 gint64 t0, gint64 t1)
{
  char name[160];
  g_snprintf (name, sizeof name, "%s %s", node, pass == NL_TRACE_PASS_BACKWARD ? "backward" : "forward");
  NlTraceEvent e = { .name = g_intern_string (name), .cat = device ? NL_TRACE_CAT_DEVICE : NL_TRACE_CAT_OP,
                     .node = g_intern_string (node), .op = g_intern_string (op), .pass = pass,
                     .arg_key = "step", .arg = step };
  e.cat = g_intern_static_string (e.cat);
  g_mutex_lock (&t->lock);
  e.ts = t0 - t->start_us;
  e.dur = MAX (t1 - t0, 0);
  add_locked (t, &e, device);
  g_mutex_unlock (&t->lock);
}

const NlTraceEvent *
nl_trace_events (NlTrace *t, guint *n)
{
  *n = t->events->len;
  return (const NlTraceEvent *) (gpointer) t->events->data;
}

guint64
nl_trace_dropped (NlTrace *t)
{
  return t->dropped;
}

static void
append_string (GString *s, const char *v)
{
  g_string_append_c (s, '"');
  for (const char *c = v; *c; c++)
    {
      if (*c == '"' || *c == '\\')
        g_string_append_printf (s, "\\%c", *c);
      else if ((guchar) *c < 0x20)
        g_string_append_printf (s, "\\u%04x", (guchar) *c);
      else
        g_string_append_c (s, *c);
    }
  g_string_append_c (s, '"');
}

static void
append_event (GString *s, const NlTraceEvent *e, int pid)
{
  g_string_append (s, "{\"name\":");
  append_string (s, e->name);
  g_string_append (s, ",\"cat\":");
  append_string (s, e->cat);
  g_string_append_printf (s, ",\"ph\":\"X\",\"ts\":%" G_GINT64_FORMAT ",\"dur\":%" G_GINT64_FORMAT
                          ",\"pid\":%d,\"tid\":%d,\"args\":{",
                          e->ts, e->dur, pid, e->tid);
  if (e->node)
    {
      g_string_append (s, "\"node\":");
      append_string (s, e->node);
      g_string_append (s, ",\"op\":");
      append_string (s, e->op);
      g_string_append_printf (s, ",\"pass\":\"%s\"", e->pass == NL_TRACE_PASS_BACKWARD ? "backward" : "forward");
    }
  if (e->arg_key)
    g_string_append_printf (s, "%s\"%s\":%" G_GINT64_FORMAT, e->node ? "," : "", e->arg_key, e->arg);
  g_string_append (s, "}}");
}

char *
nl_trace_to_json (NlTrace *t, gsize *length)
{
  GString *s = g_string_sized_new (128 + t->events->len * 160);
  GHashTableIter it;
  gpointer key, value;
  int pid = (int) getpid ();

  g_mutex_lock (&t->lock);
  g_string_append (s, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  g_string_append_printf (s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                          "\"args\":{\"name\":\"netloom\"}}", pid);
  g_hash_table_iter_init (&it, t->threads);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      g_string_append_printf (s, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
                              pid, GPOINTER_TO_INT (key));
      append_string (s, value);
      g_string_append (s, "}}");
    }
  for (guint i = 0; i < t->events->len; i++)
    {
      g_string_append (s, ",\n");
      append_event (s, &g_array_index (t->events, NlTraceEvent, i), pid);
    }
  g_string_append_printf (s, "\n],\"otherData\":{\"producer\":\"netloom\",\"dropped_events\":%" G_GUINT64_FORMAT
                          "}}\n", t->dropped);
  g_mutex_unlock (&t->lock);
  if (length)
    *length = s->len;
  return g_string_free (s, FALSE);
}

gboolean
nl_trace_write (NlTrace *t, const char *path, GError **error)
{
  gsize len;
  g_autofree char *json = nl_trace_to_json (t, &len);
  return nl_atomic_file_set_contents (path, json, len, error);
}
