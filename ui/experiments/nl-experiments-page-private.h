/* nl-experiments-page-private.h — the page's struct, shared by
 * nl-experiments-page.c (table, refresh), nl-experiments-page-columns.c
 * (what the cells show, sorting), nl-experiments-page-actions.c (row
 * actions, exports) and nl-experiments-page-compare.c (the comparison
 * pane). */
#pragma once

#include "ui/experiments/nl-experiments-page.h"
#include "ui/experiments/nl-hparam-diff.h"
#include "ui/experiments/nl-run-row.h"
#include "ui/experiments/nl-sweep-view.h"
#include "ui/plot/nl-plot.h"

struct _NlExperimentsPage {
  AdwBin parent_instance;

  /* template children */
  GtkStack *stack;
  GtkSearchEntry *search;
  GtkLabel *count_label;
  GtkMenuButton *tags_button, *notes_button;
  GtkScrolledWindow *table_scroller;
  GtkColumnView *view;
  GtkStack *compare_stack;
  GtkLabel *compare_label;
  GtkDropDown *metric_dropdown;
  GtkBox *plot_box;
  NlHparamDiff *diff;
  GtkSwitch *only_diff;
  GMenuModel *row_menu;

  NlWorkspace *ws;
  /* runs or sweeps: the page's own content, switched at the top */
  GtkStack *modes;
  NlSweepView *sweep_view;

  /* the table: store (newest run first) -> filter -> sort -> selection */
  GListStore *store;
  GtkCustomFilter *filter;
  GtkFilterListModel *filtered;
  GtkSortListModel *sorted;
  GtkMultiSelection *selection;
  GPtrArray *metric_keys;     /* "split/name" of the metrics that have columns */
  GtkWidget *row_popover;
  GtkWidget *tags_popover, *tags_list, *tags_entry;
  GtkWidget *notes_popover, *notes_list, *notes_entry;

  /* refresh from the project, one at a time */
  GCancellable *cancel;
  gboolean refreshing, refresh_again, loaded;
  guint tick_id, selection_idle;

  /* comparison pane */
  NlPlot *plot;
  GPtrArray *options;         /* MetricOption, the dropdown's entries */
  GtkStringList *option_labels;
  gboolean options_updating;
  GArray *plot_runs;          /* gint64, the runs plotted, in series order */
  GArray *plot_rowids;        /* gint64, the last metric rowid read per plotted run */
  guint plot_generation;
  gboolean plot_loading, plot_again;
  char *plot_signature, *diff_signature;  /* what the curves and the diff show */

  NlExperimentsRunFunc resume_func;
  gpointer resume_data;
  GDestroyNotify resume_destroy;
};

/* nl-experiments-page.c */
/* The selected rows (NlRunRow, referenced) in display order. */
GPtrArray *_nl_experiments_page_selected_rows (NlExperimentsPage *page);
/* the same as run ids (gint64), in view order */
GArray *_nl_experiments_page_selected_ids (NlExperimentsPage *page);
NlRunRow *_nl_experiments_page_find_row (NlExperimentsPage *page, gint64 run);
void _nl_experiments_page_refresh (NlExperimentsPage *page);

/* nl-experiments-page-columns.c */
void _nl_experiments_page_setup_columns (NlExperimentsPage *page);
/* Columns for metrics that appeared since. */
void _nl_experiments_page_add_new_metric_columns (NlExperimentsPage *page);

/* nl-experiments-page-actions.c */
void _nl_experiments_page_install_actions (NlExperimentsPageClass *klass);
void _nl_experiments_page_update_actions (NlExperimentsPage *page);
void _nl_experiments_page_setup_popups (NlExperimentsPage *page);
void _nl_experiments_page_update_popups (NlExperimentsPage *page);

/* nl-experiments-page-compare.c */
void _nl_experiments_page_compare_init (NlExperimentsPage *page);
void _nl_experiments_page_compare_dispose (NlExperimentsPage *page);
/* The selection changed: new diff, options and curves. */
void _nl_experiments_page_compare_update (NlExperimentsPage *page);
/* New metric points may have arrived: extend the curves. */
void _nl_experiments_page_compare_poll (NlExperimentsPage *page);
