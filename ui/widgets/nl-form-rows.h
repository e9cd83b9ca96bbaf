/* nl-form-rows.h — the rows of settings forms (the Training page's
 * groups), made in code one line per setting: each control is kept by
 * name in FIELDS and calls CHANGED (swapped, with OWNER) when it changes. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

typedef struct {
  GHashTable *fields;        /* name -> control; the names are static strings */
  GCallback changed;         /* void (*) (GObject *owner) */
  GObject *owner;
} NlFormRows;

/* Adds ROW to PARENT, an AdwPreferencesGroup or an AdwExpanderRow. */
void nl_form_rows_add (GtkWidget *parent, GtkWidget *row);
/* DIGITS < 0: any magnitude, shown as "1e-08". */
GtkSpinButton *nl_form_rows_spin (NlFormRows *r, GtkWidget *parent, const char *key, const char *title,
                                  const char *subtitle, double lower, double upper, double step, int digits,
                                  double value);
/* A spin row for the run setting FIELD (engine/train/nl-run-config.h): its
 * range and default are the run settings' own. */
GtkSpinButton *nl_form_rows_setting (NlFormRows *r, GtkWidget *parent, const char *key, const char *field,
                                     const char *title, const char *subtitle, double step, int digits);
GtkSwitch *nl_form_rows_switch (NlFormRows *r, GtkWidget *parent, const char *key, const char *title,
                                const char *subtitle);
AdwComboRow *nl_form_rows_combo (NlFormRows *r, GtkWidget *parent, const char *key, const char *title,
                                 const char *subtitle, GListModel *model);
GListModel *nl_form_strings (const char *const *items);
/* the same of titles marked N_(): each shown translated */
GListModel *nl_form_titles (const char *const *items);
/* Shows or hides the row CONTROL sits in. */
void nl_form_set_row_visible (GtkWidget *control, gboolean visible);

G_END_DECLS
