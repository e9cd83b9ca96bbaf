/* nl-layers-panel-private.h — the Layers panel's parts, shared by
 *   nl-layers-panel.c        the rows: points in, sparklines, marks, time shares
 *   nl-layers-panel-ridge.c  the ridge plot of the activated layer, read from the project */
#pragma once

#include "ui/training/nl-layers-panel.h"

G_BEGIN_DECLS

typedef enum { METRIC_GRAD, METRIC_RATIO, METRIC_DEAD, N_LAYER_METRICS } LayerMetric;

typedef struct {
  char *node;
  GPtrArray *tensors;          /* interned "fc1.weight", in the order first seen */
  const char *primary;         /* the tensor the grad and ratio lines follow */
  GtkListBoxRow *row;
  GtkImage *mark;              /* the first NaN/Inf was made here */
  NlSparkline *lines[N_LAYER_METRICS];
  GtkLabel *values[N_LAYER_METRICS];
  GtkLevelBar *time_bar;
  GtkLabel *time_label;
  double ms, share;            /* profile/<node>/ms and its share; NaN: none */
  int nonfinite;               /* 1 forward, 2 backward */
  guint seen;                  /* rows before it when it came */
  gboolean flagged;
} Layer;

struct _NlLayersPanel {
  GtkBox parent_instance;
  GHashTable *layers;          /* node -> Layer, owned */
  GPtrArray *order;            /* Layer, as they came */
  GHashTable *node_order;      /* node id -> its index in the network */
  GArray *grad_norms;          /* every finite grad norm so far (double) */
  guint grad_idle;
  GtkSizeGroup *name_group, *metric_group, *time_group;
  GtkButton *profile_button;
  GtkListBox *list;
  GtkStack *list_stack;
  GtkPaned *paned;

  /* the ridge plot (nl-layers-panel-ridge.c) */
  GtkWidget *ridge_box;
  GtkDropDown *tensor_dropdown;
  GtkStringList *tensor_list;
  GtkToggleButton *grad_toggle;
  NlRidgePlot *ridge;
  char *ridge_node;            /* the open layer; NULL: closed */
  const char *ridge_tensor;    /* interned */
  gboolean filling;            /* the controls are being set: no reactions */
  NlWorkspace *ws;
  gint64 run;
  GCancellable *load_cancel;
  gboolean loading, load_again;
};

/* nl-layers-panel.c */
Layer *_nl_layers_panel_find (NlLayersPanel *self, const char *node);
int _nl_layers_compare_double (const double *a, const double *b);

/* nl-layers-panel-ridge.c */
GtkWidget *_nl_layers_panel_ridge_init (NlLayersPanel *self);
void _nl_layers_panel_ridge_open (NlLayersPanel *self, Layer *l);
void _nl_layers_panel_ridge_close (NlLayersPanel *self);
void _nl_layers_panel_ridge_dispose (NlLayersPanel *self);

G_END_DECLS
