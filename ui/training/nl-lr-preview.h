/* nl-lr-preview.h — a small Cairo plot of a learning-rate schedule over a
 * whole run (rate against step, epoch ticks), for the Training page's form.
 * It evaluates the schedule exactly as the trainer will
 * (nl-lr-schedule.h), so what it draws is what the run gets. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define NL_TYPE_LR_PREVIEW (nl_lr_preview_get_type ())
G_DECLARE_FINAL_TYPE (NlLrPreview, nl_lr_preview, NL, LR_PREVIEW, GtkWidget)

GtkWidget *nl_lr_preview_new (void);
/* Shows SPEC (NULL: constant) from BASE_LR over TOTAL_UPDATES steps, with a
 * tick at every STEPS_PER_EPOCH (<= 0: none). FALSE with an error when the
 * schedule is invalid; the widget then shows the message instead. */
gboolean nl_lr_preview_set_schedule (NlLrPreview *self, const char *spec, double base_lr, gint64 total_updates,
                                     gint64 steps_per_epoch, GError **error);
/* The message shown when the schedule is invalid, else NULL. */
const char *nl_lr_preview_get_error (NlLrPreview *self);
/* The sampled curve (tests): at most a few hundred (step, rate) points. */
guint nl_lr_preview_get_n_points (NlLrPreview *self);
gboolean nl_lr_preview_get_point (NlLrPreview *self, guint i, double *step, double *lr);

G_END_DECLS
