/* nl-network-page-private.h — the page's struct, shared by
 * nl-network-page.c (loading, analysis, panels) and
 * nl-network-page-actions.c (editor.* actions and shortcuts). */
#pragma once

#include "engine/session/nl-analysis.h"
#include "ui/network/nl-graph-canvas.h"
#include "ui/network/nl-inspector.h"
#include "ui/network/nl-network-doc.h"
#include "ui/network/nl-network-page.h"
#include "ui/network/nl-palette.h"

/* Networks up to this size are analysed on the main loop (well under a
 * millisecond); bigger ones in a worker thread. */
#define NL_ANALYSIS_SYNC_NODES 200

struct _NlNetworkPage {
  AdwBin parent_instance;

  GtkDropDown *network_dropdown;
  GtkDropDown *version_dropdown;
  GtkButton *save_button;
  GtkSpinButton *batch_spin;
  NlPalette *palette;
  NlGraphCanvas *canvas;
  NlInspector *inspector;
  GtkLabel *problems_title;
  GtkListBox *problems_list;
  GtkLabel *status_label;

  NlWorkspace *ws;
  NlNetworkDoc *doc;
  GtkStringList *names;     /* the project's networks */
  GtkStringList *versions;  /* "Version N" of the current name, newest first */
  GArray *version_numbers;  /* int, parallel to versions */
  int version;              /* the version loaded, 0 when unsaved */
  gboolean syncing;         /* filling the drop-downs: ignore their signals */
  GCancellable *loading;
  guint analysis_serial;    /* the newest analysis wins */
  gboolean analysis_running;
  gboolean analysis_dirty;
  int batch_size;           /* for the memory estimate */

  /* the status bar's pipeline and its sample shape (nl-network-page-shapes.c) */
  GtkDropDown *pipeline_dropdown;
  GtkStringList *pipelines;   /* "No pipeline", then the project's by name */
  GCancellable *shape_loading;
  NlShape sample;             /* ndim < 0: none (no pipeline, or it failed) */
  char *sample_from;          /* the pipeline it is of */
  char *sample_note;          /* what the status bar says about it; NULL: nothing */
  char *pipeline_key;         /* the chosen pipeline as loaded (its JSON), NULL: none */
};

/* nl-network-page.c */
void _nl_network_page_reload_names (NlNetworkPage *page);
/* Lays the cards out as Arrange does (positions set, no undo step); an
 * NlNetworkArrangeFunc. Any thread. */
void _nl_network_page_arrange (NlNetwork *net, gpointer unused);
/* Replaces the document's network (takes ownership) as version VERSION of its name (0: unsaved). */
void _nl_network_page_show_network (NlNetworkPage *page, NlNetwork *net, int version);
void _nl_network_page_analyze (NlNetworkPage *page);
/* Opens LeNet in the sample project, else the first network, else an empty one. */
void _nl_network_page_open_default (NlNetworkPage *page);
void _nl_network_page_problem (NlNetworkPage *page, const char *message);
/* The newest saved version of NAME, 0 when none (any thread). */
int _nl_network_page_latest_version (NlProject *p, const char *name);

/* nl-network-page-actions.c */
void _nl_network_page_install_actions (GtkWidgetClass *klass);
void _nl_network_page_update_actions (NlNetworkPage *page);
void _nl_network_page_save (NlNetworkPage *page);
void _nl_network_page_import_file (NlNetworkPage *page, const char *path, const char *kind);
void _nl_network_page_export_file (NlNetworkPage *page, const char *path, const char *kind);

/* nl-network-page-onnx.c */
void _nl_network_page_install_onnx_actions (GtkWidgetClass *klass);

/* nl-network-page-shapes.c: the status bar's pipeline, whose sample shape
 * an Input without a fixed shape takes */
void _nl_network_page_shapes_init (NlNetworkPage *page);
void _nl_network_page_shapes_dispose (NlNetworkPage *page);
/* The project's pipelines changed, or another project opened. */
void _nl_network_page_reload_pipelines (NlNetworkPage *page);
/* The sample shape the analysis uses, NULL when none. */
const NlShape *_nl_network_page_sample_shape (NlNetworkPage *page);
/* "input 3×32×32 from “cifar”", "input 1×28×28 (fixed)" ...: the status
 * bar's first part; NULL without an Input. */
char *_nl_network_page_input_text (NlNetworkPage *page, const NlAnalysis *a);
