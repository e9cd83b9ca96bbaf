/* nl-trace-table.h — a trace file (nl-trace.h) read back and summed up as
 * MXNet's profiler.dumps() does: per layer (node) and per op type, the
 * calls, total and mean time and share of all op time.
 *
 * The reader is strict: the file must be JSON with a traceEvents array of
 * objects, each with a "ph" string; every complete ("X") event needs a
 * name, numeric ts and pid/tid, a dur >= 0, and the op events (cat "op" or
 * "device") args with node, op and pass. Anything else is one error saying
 * which event and what is wrong. Other phases ("M", "B", ...) are passed
 * over. Where the file holds device events (a GPU run) the table sums
 * those, the time the ops took on the device; else the host's. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define NL_TRACE_TABLE_ERROR (nl_trace_table_error_quark ())
GQuark nl_trace_table_error_quark (void);
typedef enum {
  NL_TRACE_TABLE_ERROR_READ,    /* the file could not be read */
  NL_TRACE_TABLE_ERROR_INVALID, /* not a trace: the message says where and why */
} NlTraceTableError;

typedef struct {
  const char *name;   /* layers: the node's id; ops: the op type */
  const char *op;     /* layers: the op type; ops: the same as name */
  gint64 calls;       /* forward and backward calls */
  double total_ms, mean_ms;
  double share;       /* of every op's time, 0..1 */
} NlTraceRow;

typedef struct {
  GArray *layers, *ops; /* NlTraceRow, longest total first (ties by name) */
  gint64 events;        /* complete events read */
  gint64 steps;         /* distinct steps among the op events */
  double total_ms;      /* all op time */
  gboolean device;      /* the rows are device time */
  GStringChunk *strings;
} NlTraceTable;

/* what names the text in errors ("trace.json") */
NlTraceTable *nl_trace_table_parse (const char *text, gsize length, const char *what, GError **error);
NlTraceTable *nl_trace_table_load (const char *path, GError **error);
void nl_trace_table_free (NlTraceTable *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlTraceTable, nl_trace_table_free)

G_END_DECLS
