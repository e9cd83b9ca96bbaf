/* nl-record-writer.h — writing record files (nl-record.h describes the
 * format): payloads appended as records, split into parts where the
 * format needs it, into a file that appears whole or not at all. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "engine/data/nl-record.h"

G_BEGIN_DECLS

typedef struct NlRecordWriter NlRecordWriter;

/* Records go to a temporary file next to `path`, which becomes `path` only
 * on a successful nl_record_writer_close (fsync, then rename), so a failed
 * or interrupted write never leaves a partial file under that name. */
NlRecordWriter *nl_record_writer_open (const char *path, GError **error);
/* For tests: split payloads into parts of at most max_part bytes (a
 * multiple of 4, 4 .. NL_RECORD_MAX_PART). */
void nl_record_writer_set_max_part (NlRecordWriter *w, guint32 max_part);
gboolean nl_record_writer_append (NlRecordWriter *w, const void *data, size_t len, GError **error);
int64_t nl_record_writer_count (const NlRecordWriter *w);
/* Flush, fsync, rename into place and free w (also on failure, which
 * removes the temporary file). */
gboolean nl_record_writer_close (NlRecordWriter *w, GError **error);
/* Drop everything written and free w. NULL is ignored. */
void nl_record_writer_abort (NlRecordWriter *w);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlRecordWriter, nl_record_writer_abort)

G_END_DECLS
