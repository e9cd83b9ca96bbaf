/* nl-sparkline.h — a small line of one metric over steps, drawn with
 * Cairo, with a usual range: points outside it are drawn in the error
 * colour (the Layers panel's and the system strip's cells). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define NL_TYPE_SPARKLINE (nl_sparkline_get_type ())
G_DECLARE_FINAL_TYPE (NlSparkline, nl_sparkline, NL, SPARKLINE, GtkWidget)

GtkWidget *nl_sparkline_new (void);
void nl_sparkline_clear (NlSparkline *s);
/* Points come in step order; a point at the last step replaces it; an
 * older one is left out (FALSE). */
gboolean nl_sparkline_append (NlSparkline *s, double x, double y);
/* The usual range [lo, hi] (NaN: unbounded on that side). */
void nl_sparkline_set_range (NlSparkline *s, double lo, double hi);
/* A fixed y scale [lo, hi] (a fraction: [0, 1]) instead of the points'. */
void nl_sparkline_set_y_bounds (NlSparkline *s, double lo, double hi);
/* A logarithmic y axis (values <= 0 are left out). */
void nl_sparkline_set_log (NlSparkline *s, gboolean log_y);
guint nl_sparkline_get_n_points (NlSparkline *s);
/* The newest value; NaN without points. */
double nl_sparkline_get_last (NlSparkline *s);
/* Whether the newest value is outside the usual range. */
gboolean nl_sparkline_last_out_of_range (NlSparkline *s);
/* Whether Y is outside the usual range (NaN and Inf are). */
gboolean nl_sparkline_out_of_range (NlSparkline *s, double y);

G_END_DECLS
