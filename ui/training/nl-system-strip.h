/* nl-system-strip.h — the strip under the loss plot: one cell per system
 * metric the run has (system/cpu_percent, rss_mb, gpu_util_percent,
 * gpu_mem_mb, input_wait_ms), each its newest value and a sparkline. */
#pragma once

#include <gtk/gtk.h>

#include "projects/nl-project.h"
#include "ui/plot/nl-sparkline.h"

G_BEGIN_DECLS

#define NL_TYPE_SYSTEM_STRIP (nl_system_strip_get_type ())
G_DECLARE_FINAL_TYPE (NlSystemStrip, nl_system_strip, NL, SYSTEM_STRIP, GtkBox)

/* "CPU", "Memory" ... (translated) for a system metric's key, with its
 * unit in *unit (may be NULL); NULL for any other key. */
const char *nl_system_metric_title (const char *name, const char **unit);

GtkWidget *nl_system_strip_new (void);
void nl_system_strip_clear (NlSystemStrip *self);
/* Takes a system/ point; FALSE (nothing done) for any other. */
gboolean nl_system_strip_add_row (NlSystemStrip *self, const NlMetricRow *row);
/* The cell of a system metric's key (NULL for another key), and the text
 * of its value ("" before a point). */
NlSparkline *nl_system_strip_get_sparkline (NlSystemStrip *self, const char *name);
const char *nl_system_strip_get_value_text (NlSystemStrip *self, const char *name);

G_END_DECLS
