/* nl-event-log.h — a run's event log: one row per event (time, kind,
 * message), newest at the bottom and kept in view unless the user scrolled
 * up to read, at most 1,000 rows. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define NL_TYPE_EVENT_LOG (nl_event_log_get_type ())
G_DECLARE_FINAL_TYPE (NlEventLog, nl_event_log, NL, EVENT_LOG, AdwBin)

/* kind: "STATUS", "EPOCH", "CHECKPOINT", "ERROR" ... (ERROR rows are marked). */
void nl_event_log_append (NlEventLog *self, const char *kind, const char *message);
void nl_event_log_clear (NlEventLog *self);
guint nl_event_log_get_n_rows (NlEventLog *self);

G_END_DECLS
