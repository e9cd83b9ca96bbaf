/* nl-layers-panel.c — layer statistics at a glance. Points arrive as the
 * dashboard reads them (the page's own run or one another process
 * trains); each layer/ key names its node and metric:
 *   layer/<node>.<tensor>/{weight_norm,grad_norm,update_ratio}  a parameter
 *   layer/<node>/{act_mean,act_std,dead_fraction,first_nonfinite} an output
 * (a node id may itself hold dots: the metric says which form it is). A
 * layer's sparklines follow its "weight" tensor, or its first one. The
 * gradient norm's usual range follows the run: the median of every
 * gradient norm so far, times and over NL_LAYERS_GRAD_SPREAD. */
#include "ui/training/nl-layers-panel.h"
#include <glib/gi18n.h>
#include "ui/training/nl-layers-panel-private.h"

#include <math.h>
#include <string.h>

G_DEFINE_FINAL_TYPE (NlLayersPanel, nl_layers_panel, GTK_TYPE_BOX)

enum { SIGNAL_PROFILE_REQUESTED, N_SIGNALS };
static guint signals[N_SIGNALS];

static const char *const metric_names[N_LAYER_METRICS] = { "grad_norm", "update_ratio", "dead_fraction" };

static void
layer_free (Layer *l)
{
  g_ptr_array_unref (l->tensors);
  g_free (l->node);
  g_free (l);
}

/* ---- a row ---- */

static char *
format_value (int metric, double v)
{
  if (!isfinite (v))
    return g_strdup (isnan (v) ? "NaN" : v > 0 ? "Inf" : "-Inf");
  if (metric == METRIC_DEAD)
    return g_strdup_printf ("%.1f %%", 100 * v);  /* 50.1 % is marked, 50 % would look wrong */
  return g_strdup_printf ("%.2e", v);
}

static const char *
range_rule (int metric)
{
  switch (metric)
    {
    case METRIC_GRAD:
      return _("Gradient norm of the layer's weight. Marked when outside [median / 100, median × 100], the median "
               "of every gradient norm of the run so far: vanishing or exploding gradients.");
    case METRIC_RATIO:
      return _("‖Δw‖ / ‖w‖ of one update. Marked when outside [1e-4, 1e-1]: about 1e-3 is healthy; below, the "
               "layer barely learns; above, the learning rate is too high for it.");
    default:
      return _("Fraction of the layer's outputs that are exactly zero (dead ReLUs). Marked above 50 %.");
    }
}

static void
update_flags (NlLayersPanel *self, Layer *l)
{
  gboolean any = l->nonfinite != 0;
  for (int m = 0; m < N_LAYER_METRICS; m++)
    {
      gboolean out = nl_sparkline_last_out_of_range (l->lines[m]);
      if (out)
        gtk_widget_add_css_class (GTK_WIDGET (l->values[m]), "error");
      else
        gtk_widget_remove_css_class (GTK_WIDGET (l->values[m]), "error");
      any |= out;
    }
  l->flagged = any;
}

static GtkWidget *
make_metric_cell (Layer *l, int m, GtkSizeGroup *group)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *line = nl_sparkline_new ();
  GtkWidget *value = gtk_label_new ("–");

  gtk_widget_set_hexpand (line, TRUE);
  gtk_widget_set_valign (line, GTK_ALIGN_CENTER);
  gtk_label_set_xalign (GTK_LABEL (value), 1);
  gtk_label_set_width_chars (GTK_LABEL (value), 8);
  gtk_widget_add_css_class (value, "nl-numeric");
  gtk_widget_add_css_class (value, "caption");
  gtk_box_append (GTK_BOX (box), line);
  gtk_box_append (GTK_BOX (box), value);
  gtk_widget_set_tooltip_text (box, range_rule (m));
  gtk_size_group_add_widget (group, box);
  if (m == METRIC_DEAD)
    {
      nl_sparkline_set_range (NL_SPARKLINE (line), NAN, NL_LAYERS_DEAD_MAX);
      nl_sparkline_set_y_bounds (NL_SPARKLINE (line), 0, 1);  /* a flat 2 % looks flat */
    }
  else
    {
      nl_sparkline_set_log (NL_SPARKLINE (line), TRUE);
      if (m == METRIC_RATIO)
        nl_sparkline_set_range (NL_SPARKLINE (line), NL_LAYERS_RATIO_LO, NL_LAYERS_RATIO_HI);
    }
  l->lines[m] = NL_SPARKLINE (line);
  l->values[m] = GTK_LABEL (value);
  return box;
}

static Layer *
add_layer (NlLayersPanel *self, const char *node)
{
  Layer *l = g_new0 (Layer, 1);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *name_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
  GtkWidget *name = gtk_label_new (node);
  GtkWidget *time_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);

  l->node = g_strdup (node);
  l->tensors = g_ptr_array_new ();
  l->ms = NAN;
  l->mark = GTK_IMAGE (gtk_image_new_from_icon_name ("dialog-warning-symbolic"));
  gtk_widget_add_css_class (GTK_WIDGET (l->mark), "error");
  gtk_widget_set_visible (GTK_WIDGET (l->mark), FALSE);
  gtk_label_set_xalign (GTK_LABEL (name), 0);
  gtk_label_set_ellipsize (GTK_LABEL (name), PANGO_ELLIPSIZE_MIDDLE);
  gtk_widget_set_hexpand (name, TRUE);
  gtk_box_append (GTK_BOX (name_box), GTK_WIDGET (l->mark));
  gtk_box_append (GTK_BOX (name_box), name);
  gtk_size_group_add_widget (self->name_group, name_box);
  gtk_box_append (GTK_BOX (box), name_box);
  for (int m = 0; m < N_LAYER_METRICS; m++)
    gtk_box_append (GTK_BOX (box), make_metric_cell (l, m, self->metric_group));

  l->time_bar = GTK_LEVEL_BAR (gtk_level_bar_new_for_interval (0, 1));
  gtk_level_bar_set_value (l->time_bar, 0);
  gtk_widget_set_hexpand (GTK_WIDGET (l->time_bar), TRUE);
  gtk_widget_set_valign (GTK_WIDGET (l->time_bar), GTK_ALIGN_CENTER);
  /* one colour whatever the share: a level bar's low/high offsets mean "bad" */
  gtk_level_bar_remove_offset_value (l->time_bar, GTK_LEVEL_BAR_OFFSET_LOW);
  gtk_level_bar_remove_offset_value (l->time_bar, GTK_LEVEL_BAR_OFFSET_HIGH);
  gtk_level_bar_remove_offset_value (l->time_bar, GTK_LEVEL_BAR_OFFSET_FULL);
  l->time_label = GTK_LABEL (gtk_label_new ("–"));
  gtk_label_set_width_chars (l->time_label, 5);
  gtk_label_set_xalign (l->time_label, 1);
  gtk_widget_add_css_class (GTK_WIDGET (l->time_label), "nl-numeric");
  gtk_widget_add_css_class (GTK_WIDGET (l->time_label), "caption");
  gtk_box_append (GTK_BOX (time_box), GTK_WIDGET (l->time_bar));
  gtk_box_append (GTK_BOX (time_box), GTK_WIDGET (l->time_label));
  gtk_widget_set_tooltip_text (time_box, _("This layer's share of step time (forward and backward) over the last "
                                           "profiled steps"));
  gtk_size_group_add_widget (self->time_group, time_box);
  gtk_box_append (GTK_BOX (box), time_box);

  l->row = GTK_LIST_BOX_ROW (gtk_list_box_row_new ());
  gtk_list_box_row_set_child (l->row, box);
  gtk_widget_set_margin_top (box, 4);
  gtk_widget_set_margin_bottom (box, 4);
  g_object_set_data (G_OBJECT (l->row), "nl-layer", l);
  l->seen = self->order->len;
  gtk_list_box_append (self->list, GTK_WIDGET (l->row));
  g_hash_table_insert (self->layers, l->node, l);
  g_ptr_array_add (self->order, l);
  gtk_stack_set_visible_child_name (self->list_stack, "list");
  return l;
}

/* ---- points ---- */

/* The median of every gradient norm so far bounds the usual range. */
static gboolean
update_grad_ranges (gpointer data)
{
  NlLayersPanel *self = data;
  g_autoptr (GArray) v = g_array_copy (self->grad_norms);
  double med, lo, hi;

  self->grad_idle = 0;
  if (v->len == 0)
    return G_SOURCE_REMOVE;
  g_array_sort (v, (GCompareFunc) _nl_layers_compare_double);
  med = v->len % 2 ? g_array_index (v, double, v->len / 2)
                   : 0.5 * (g_array_index (v, double, v->len / 2 - 1) + g_array_index (v, double, v->len / 2));
  lo = med / NL_LAYERS_GRAD_SPREAD;
  hi = med * NL_LAYERS_GRAD_SPREAD;
  for (guint i = 0; i < self->order->len; i++)
    {
      Layer *l = g_ptr_array_index (self->order, i);
      nl_sparkline_set_range (l->lines[METRIC_GRAD], lo, hi);
      update_flags (self, l);
    }
  return G_SOURCE_REMOVE;
}

static void
set_metric (NlLayersPanel *self, Layer *l, int m, const NlMetricRow *row)
{
  g_autofree char *text = NULL;
  if (!nl_sparkline_append (l->lines[m], (double) row->step, row->value))
    return;
  text = format_value (m, row->value);
  gtk_label_set_label (l->values[m], text);
  if (m == METRIC_GRAD && isfinite (row->value))
    {
      g_array_append_val (self->grad_norms, row->value);
      if (!self->grad_idle)
        self->grad_idle = g_idle_add (update_grad_ranges, self);
    }
  update_flags (self, l);
}

static void
set_nonfinite (NlLayersPanel *self, Layer *l, const NlMetricRow *row)
{
  const char *where = row->value == 1 ? _("forward") : _("backward");
  g_autofree char *tip = g_strdup_printf (_("'%s' made the run's first NaN or Inf in %s at step %" G_GINT64_FORMAT),
                                          l->node, where, row->step);
  l->nonfinite = row->value == 1 ? 1 : 2;
  gtk_widget_set_visible (GTK_WIDGET (l->mark), TRUE);
  gtk_widget_set_tooltip_text (GTK_WIDGET (l->mark), tip);
  gtk_widget_add_css_class (GTK_WIDGET (l->row), "nl-layer-nonfinite");
  update_flags (self, l);
}

static void
update_time_shares (NlLayersPanel *self)
{
  double total = 0;
  for (guint i = 0; i < self->order->len; i++)
    {
      Layer *l = g_ptr_array_index (self->order, i);
      if (isfinite (l->ms) && l->ms > 0)
        total += l->ms;
    }
  for (guint i = 0; i < self->order->len; i++)
    {
      Layer *l = g_ptr_array_index (self->order, i);
      double share = total > 0 && isfinite (l->ms) ? MAX (l->ms, 0) / total : NAN;
      g_autofree char *text = isnan (share) ? g_strdup ("–") : g_strdup_printf ("%.0f %%", 100 * share);
      gtk_level_bar_set_value (l->time_bar, isnan (share) ? 0 : share);
      gtk_label_set_label (l->time_label, text);
      l->share = share;
    }
}

/* "fc1.weight" of a per-tensor key: the layer is what comes before the last dot. */
static void
add_tensor_point (NlLayersPanel *self, const char *mid, const char *metric, const NlMetricRow *row)
{
  const char *dot = strrchr (mid, '.');
  g_autofree char *node = dot && dot > mid ? g_strndup (mid, dot - mid) : g_strdup (mid);
  const char *tensor = g_intern_string (mid);
  Layer *l = g_hash_table_lookup (self->layers, node);
  int m = !strcmp (metric, "grad_norm") ? METRIC_GRAD : !strcmp (metric, "update_ratio") ? METRIC_RATIO : -1;

  if (!l)
    l = add_layer (self, node);
  if (!g_ptr_array_find (l->tensors, tensor, NULL))
    g_ptr_array_add (l->tensors, (gpointer) tensor);
  if (m < 0)
    return;  /* weight_norm: the CLI's table has it */
  if (!l->primary || (l->primary != tensor && dot && !strcmp (dot + 1, "weight")
                      && !g_str_has_suffix (l->primary, ".weight")))
    {
      /* the weight's line from now on, not the bias's */
      if (l->primary)
        for (int k = METRIC_GRAD; k <= METRIC_RATIO; k++)
          nl_sparkline_clear (l->lines[k]);
      l->primary = tensor;
    }
  if (tensor == l->primary)
    set_metric (self, l, m, row);
}

gboolean
nl_layers_panel_add_row (NlLayersPanel *self, const NlMetricRow *row)
{
  const char *name = row->name, *slash;
  g_autofree char *mid = NULL;
  Layer *l;

  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), FALSE);
  if (g_str_has_prefix (name, "profile/") && g_str_has_suffix (name, "/ms") && strlen (name) > 11)
    {
      g_autofree char *node = g_strndup (name + 8, strlen (name) - 11);
      if (!(l = g_hash_table_lookup (self->layers, node)))
        l = add_layer (self, node);
      l->ms = row->value;
      update_time_shares (self);
      return TRUE;
    }
  if (!g_str_has_prefix (name, "layer/") || !(slash = strrchr (name, '/')) || slash <= name + 6)
    return FALSE;
  mid = g_strndup (name + 6, slash - (name + 6));
  if (!strcmp (slash + 1, "grad_norm") || !strcmp (slash + 1, "update_ratio") || !strcmp (slash + 1, "weight_norm"))
    {
      add_tensor_point (self, mid, slash + 1, row);
      return TRUE;
    }
  if (!(l = g_hash_table_lookup (self->layers, mid)))
    l = add_layer (self, mid);
  if (!strcmp (slash + 1, "dead_fraction"))
    set_metric (self, l, METRIC_DEAD, row);
  else if (!strcmp (slash + 1, "first_nonfinite"))
    set_nonfinite (self, l, row);
  return TRUE;  /* act_mean, act_std: the CLI's table has them */
}

int
_nl_layers_compare_double (const double *a, const double *b)
{
  return (*a > *b) - (*a < *b);
}

/* ---- the panel ---- */

static void
profile_clicked (NlLayersPanel *self)
{
  g_signal_emit (self, signals[SIGNAL_PROFILE_REQUESTED], 0, NL_LAYERS_PANEL_PROFILE_STEPS);
}

/* The network's order when known, else the order first seen. */
static int
row_order (GtkListBoxRow *a, GtkListBoxRow *b, gpointer data)
{
  NlLayersPanel *self = data;
  Layer *x = g_object_get_data (G_OBJECT (a), "nl-layer"), *y = g_object_get_data (G_OBJECT (b), "nl-layer");
  gpointer px = NULL, py = NULL;
  gboolean kx = g_hash_table_lookup_extended (self->node_order, x->node, NULL, &px);
  gboolean ky = g_hash_table_lookup_extended (self->node_order, y->node, NULL, &py);
  if (kx != ky)
    return kx ? -1 : 1;
  if (kx && px != py)
    return GPOINTER_TO_INT (px) - GPOINTER_TO_INT (py);
  return (x->seen > y->seen) - (x->seen < y->seen);
}

void
nl_layers_panel_set_node_order (NlLayersPanel *self, const char *const *nodes)
{
  g_return_if_fail (NL_IS_LAYERS_PANEL (self));
  g_hash_table_remove_all (self->node_order);
  for (int i = 0; nodes && nodes[i]; i++)
    g_hash_table_insert (self->node_order, g_strdup (nodes[i]), GINT_TO_POINTER (i));
  gtk_list_box_invalidate_sort (self->list);
}

static void
row_activated (NlLayersPanel *self, GtkListBoxRow *row)
{
  Layer *l = g_object_get_data (G_OBJECT (row), "nl-layer");
  if (l)
    _nl_layers_panel_ridge_open (self, l);
}

static GtkWidget *
header_label (const char *text, GtkSizeGroup *group, gboolean expand)
{
  GtkWidget *label = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_add_css_class (label, "caption-heading");
  gtk_widget_add_css_class (label, "dim-label");
  gtk_widget_set_hexpand (label, expand);
  gtk_size_group_add_widget (group, label);
  return label;
}

static GtkWidget *
make_header (NlLayersPanel *self)
{
  GtkWidget *top = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *hint = gtk_label_new (_("Click a layer for its histograms over time. Red: outside the usual range "
                                     "(hover a column for its rule)."));
  GtkWidget *cols = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);

  gtk_label_set_xalign (GTK_LABEL (hint), 0);
  gtk_label_set_wrap (GTK_LABEL (hint), TRUE);
  gtk_widget_set_hexpand (hint, TRUE);
  gtk_widget_add_css_class (hint, "dim-label");
  self->profile_button = GTK_BUTTON (gtk_button_new_with_mnemonic (_("_Profile Next 50 Steps")));
  gtk_widget_set_valign (GTK_WIDGET (self->profile_button), GTK_ALIGN_CENTER);
  g_signal_connect_object (self->profile_button, "clicked", G_CALLBACK (profile_clicked), self, G_CONNECT_SWAPPED);
  gtk_box_append (GTK_BOX (top), hint);
  gtk_box_append (GTK_BOX (top), GTK_WIDGET (self->profile_button));

  gtk_widget_set_margin_start (cols, 12);
  gtk_widget_set_margin_end (cols, 12);
  gtk_box_append (GTK_BOX (cols), header_label (_("Layer"), self->name_group, TRUE));
  gtk_box_append (GTK_BOX (cols), header_label (_("Gradient norm"), self->metric_group, TRUE));
  gtk_box_append (GTK_BOX (cols), header_label (_("Update ratio"), self->metric_group, TRUE));
  gtk_box_append (GTK_BOX (cols), header_label (_("Dead fraction"), self->metric_group, TRUE));
  gtk_box_append (GTK_BOX (cols), header_label (_("Time share"), self->time_group, TRUE));
  gtk_box_append (GTK_BOX (box), top);
  gtk_box_append (GTK_BOX (box), cols);
  return box;
}

static void
nl_layers_panel_dispose (GObject *object)
{
  NlLayersPanel *self = NL_LAYERS_PANEL (object);
  g_clear_handle_id (&self->grad_idle, g_source_remove);
  _nl_layers_panel_ridge_dispose (self);
  g_clear_pointer (&self->layers, g_hash_table_unref);
  g_clear_pointer (&self->node_order, g_hash_table_unref);
  g_clear_pointer (&self->order, g_ptr_array_unref);
  g_clear_pointer (&self->grad_norms, g_array_unref);
  g_clear_object (&self->name_group);
  g_clear_object (&self->metric_group);
  g_clear_object (&self->time_group);
  G_OBJECT_CLASS (nl_layers_panel_parent_class)->dispose (object);
}

static void
nl_layers_panel_class_init (NlLayersPanelClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = nl_layers_panel_dispose;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "nl-layers-panel");
  /* (n_steps): the user asks to profile the next N steps of the run */
  signals[SIGNAL_PROFILE_REQUESTED] = g_signal_new ("profile-requested", G_TYPE_FROM_CLASS (klass),
                                                    G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 1,
                                                    G_TYPE_INT);
}

static void
nl_layers_panel_init (NlLayersPanel *self)
{
  GtkWidget *scroll = gtk_scrolled_window_new ();
  GtkWidget *empty = gtk_label_new (_("No layer statistics yet: a run records them every few steps "
                                      "(--layer-stats-every)."));
  GtkWidget *paned = gtk_paned_new (GTK_ORIENTATION_VERTICAL);

  gtk_orientable_set_orientation (GTK_ORIENTABLE (self), GTK_ORIENTATION_VERTICAL);
  gtk_box_set_spacing (GTK_BOX (self), 6);
  gtk_widget_set_margin_start (GTK_WIDGET (self), 6);
  gtk_widget_set_margin_end (GTK_WIDGET (self), 6);
  gtk_widget_set_margin_top (GTK_WIDGET (self), 6);
  self->layers = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) layer_free);
  self->order = g_ptr_array_new ();
  self->node_order = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->grad_norms = g_array_new (FALSE, FALSE, sizeof (double));
  self->name_group = gtk_size_group_new (GTK_SIZE_GROUP_HORIZONTAL);
  self->metric_group = gtk_size_group_new (GTK_SIZE_GROUP_HORIZONTAL);
  self->time_group = gtk_size_group_new (GTK_SIZE_GROUP_HORIZONTAL);
  gtk_box_append (GTK_BOX (self), make_header (self));

  self->list = GTK_LIST_BOX (gtk_list_box_new ());
  gtk_list_box_set_selection_mode (self->list, GTK_SELECTION_SINGLE);
  gtk_list_box_set_activate_on_single_click (self->list, TRUE);
  gtk_list_box_set_sort_func (self->list, row_order, self, NULL);
  gtk_widget_add_css_class (GTK_WIDGET (self->list), "boxed-list");
  g_signal_connect_object (self->list, "row-activated", G_CALLBACK (row_activated), self, G_CONNECT_SWAPPED);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroll), GTK_WIDGET (self->list));
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_label_set_wrap (GTK_LABEL (empty), TRUE);
  gtk_widget_add_css_class (empty, "dim-label");
  self->list_stack = GTK_STACK (gtk_stack_new ());
  gtk_stack_add_named (self->list_stack, empty, "empty");
  gtk_stack_add_named (self->list_stack, scroll, "list");
  gtk_stack_set_visible_child_name (self->list_stack, "empty");

  gtk_paned_set_start_child (GTK_PANED (paned), GTK_WIDGET (self->list_stack));
  gtk_paned_set_shrink_start_child (GTK_PANED (paned), FALSE);
  gtk_paned_set_end_child (GTK_PANED (paned), _nl_layers_panel_ridge_init (self));
  gtk_paned_set_shrink_end_child (GTK_PANED (paned), FALSE);
  gtk_widget_set_vexpand (paned, TRUE);
  self->paned = GTK_PANED (paned);
  gtk_box_append (GTK_BOX (self), paned);
  nl_layers_panel_set_can_profile (self, FALSE);
}

GtkWidget *
nl_layers_panel_new (void)
{
  return g_object_new (NL_TYPE_LAYERS_PANEL, NULL);
}

void
nl_layers_panel_clear (NlLayersPanel *self)
{
  GtkWidget *child;
  g_return_if_fail (NL_IS_LAYERS_PANEL (self));
  _nl_layers_panel_ridge_close (self);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->list))))
    gtk_list_box_remove (self->list, child);
  g_ptr_array_set_size (self->order, 0);
  g_hash_table_remove_all (self->layers);
  g_array_set_size (self->grad_norms, 0);
  g_clear_handle_id (&self->grad_idle, g_source_remove);
  gtk_stack_set_visible_child_name (self->list_stack, "empty");
}

void
nl_layers_panel_set_can_profile (NlLayersPanel *self, gboolean can)
{
  g_return_if_fail (NL_IS_LAYERS_PANEL (self));
  gtk_widget_set_sensitive (GTK_WIDGET (self->profile_button), can);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->profile_button),
                               can ? _("Time every layer's forward and backward over the next 50 steps; the "
                                       "time shares show when they are done")
                                   : _("Profiling needs a run this window trains"));
}

/* ---- what it shows ---- */

static Layer *
find_layer (NlLayersPanel *self, const char *node)
{
  return node ? g_hash_table_lookup (self->layers, node) : NULL;
}

static int
metric_index (const char *metric)
{
  for (int m = 0; m < N_LAYER_METRICS; m++)
    if (!g_strcmp0 (metric_names[m], metric))
      return m;
  return -1;
}

guint
nl_layers_panel_get_n_layers (NlLayersPanel *self)
{
  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), 0);
  return self->order->len;
}

GtkListBoxRow *
nl_layers_panel_get_row (NlLayersPanel *self, const char *node)
{
  Layer *l;
  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), NULL);
  l = find_layer (self, node);
  return l ? l->row : NULL;
}

NlSparkline *
nl_layers_panel_get_sparkline (NlLayersPanel *self, const char *node, const char *metric)
{
  Layer *l;
  int m = metric_index (metric);
  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), NULL);
  l = find_layer (self, node);
  return l && m >= 0 ? l->lines[m] : NULL;
}

const char *
nl_layers_panel_get_value_text (NlLayersPanel *self, const char *node, const char *metric)
{
  Layer *l;
  int m = metric_index (metric);
  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), NULL);
  l = find_layer (self, node);
  return l && m >= 0 ? gtk_label_get_label (l->values[m]) : NULL;
}

gboolean
nl_layers_panel_is_flagged (NlLayersPanel *self, const char *node)
{
  Layer *l;
  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), FALSE);
  if (self->grad_idle)
    {
      /* the range follows the newest points */
      g_source_remove (self->grad_idle);
      update_grad_ranges (self);
    }
  l = find_layer (self, node);
  return l && l->flagged;
}

int
nl_layers_panel_get_nonfinite (NlLayersPanel *self, const char *node)
{
  Layer *l;
  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), 0);
  l = find_layer (self, node);
  return l ? l->nonfinite : 0;
}

double
nl_layers_panel_get_time_share (NlLayersPanel *self, const char *node)
{
  Layer *l;
  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), NAN);
  l = find_layer (self, node);
  return l && isfinite (l->ms) ? l->share : NAN;
}

Layer *
_nl_layers_panel_find (NlLayersPanel *self, const char *node)
{
  return find_layer (self, node);
}

GtkButton *
nl_layers_panel_get_profile_button (NlLayersPanel *self)
{
  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), NULL);
  return self->profile_button;
}
