/* nl-data-page-private.h — the Data page's state, shared by its files:
 * nl-data-page.c (pipelines and the form), nl-data-page-transforms.c (the
 * transform list editor) and nl-data-page-preview.c (loading and showing
 * the preview). */
#pragma once

#include "ui/data/nl-class-histogram.h"
#include "ui/data/nl-data-page.h"

G_BEGIN_DECLS

struct _NlDataPage {
  AdwBin parent_instance;
  NlWorkspace *ws;

  AdwComboRow *pipeline_row, *source_row;
  AdwEntryRow *name_row, *label_column_row;
  AdwActionRow *path_row, *split_row;
  GtkSpinButton *split_spin, *batch_spin, *workers_spin;
  GtkSwitch *shuffle_switch;
  GtkWidget *form_box, *source_group, *batch_group, *transform_group, *save_button, *error_box;
  GtkWidget *details_box, *histogram_group;
  GtkMenuButton *add_transform_button;
  GtkListBox *transform_list;
  GtkSpinner *spinner;
  GtkLabel *preview_info, *error_label, *hint_label;
  GtkLabel *samples_label, *shape_label, *out_shape_label, *classes_label;
  GtkFlowBox *preview_grid;
  AdwPreferencesGroup *summary_group;
  NlClassHistogram *histogram;
  /* sequence kinds (nl-data-page-sequence.c) */
  GtkWidget *text_group, *series_group, *sequence_box;
  AdwEntryRow *text_column_row, *target_row;
  AdwComboRow *tokenizer_row;
  GtkSpinButton *vocab_size_spin, *min_count_spin, *max_length_spin, *window_spin, *horizon_spin;

  GtkStringList *pipeline_names;
  char *current;         /* the shown pipeline's name in the project */
  char *loaded_extra;    /* its extra_json: members the form does not edit are kept */
  char *raw_spec;        /* a dataset spec the form cannot show, kept until the source is edited */
  char *raw_transforms;  /* likewise, transforms that do not parse */
  char **paths;          /* the path chosen per source kind */
  GPtrArray *steps;      /* NlTransformStep* */
  int expand_step;       /* the transform row to show expanded (-1: none) */
  GHashTable *drafts;    /* name -> NlPipelineInfo*: unsaved edits of pipelines not shown */
  gboolean dirty;
  int filling;           /* > 0 while code sets the form: edits are not the user's */

  guint64 seed;
  guint generation;
  GCancellable *cancel;
  guint reload_id;
  NlWorkspace *reload_ws; /* holds a busy count while reload_id is pending */
  gboolean reopen;        /* the next load opens the dataset afresh (a file chosen again) */
  char *requested_key;    /* what the latest preview request was for */
  NlDataPreview *preview;
  char *error;
  GtkFileChooserNative *chooser;  /* weak: the open source chooser */
};

/* nl-data-page.c */
const NlDatasetKind *_nl_data_page_selected_kind (NlDataPage *page, int *index);
void _nl_data_page_set_dirty (NlDataPage *page);

/* nl-data-page-transforms.c */
void _nl_data_page_rebuild_transforms (NlDataPage *page);
void _nl_data_page_install_transform_actions (GtkWidgetClass *klass);

/* nl-data-page-preview.c */
/* Reloads the preview shortly unless it shows (or is loading) what the
 * form says; force: reload anyway (a new seed). */
void _nl_data_page_schedule_reload (NlDataPage *page, gboolean force);
/* Cancels pending and running loads (their results are dropped). */
void _nl_data_page_stop_loading (NlDataPage *page);
void _nl_data_page_clear_preview (NlDataPage *page);

/* nl-data-page-sequence.c */
void _nl_data_page_sequence_init (NlDataPage *page);
/* shows the text and series rows for the kinds that read them */
void _nl_data_page_sequence_update_rows (NlDataPage *page, const NlDatasetKind *kind);
void _nl_data_page_sequence_fill (NlDataPage *page, const NlPipelineExtra *x);
void _nl_data_page_sequence_read (NlDataPage *page, NlPipelineExtra *x);
/* FALSE when P is neither text nor series (the image tiles show it) */
gboolean _nl_data_page_sequence_show (NlDataPage *page, const NlDataPreview *p);
void _nl_data_page_sequence_clear (NlDataPage *page);

G_END_DECLS
