/* nl-layers-panel-ridge.c — the activated layer's histograms over time:
 * a tensor switch (a layer may have a weight and a bias), weights or
 * gradients, and the ridge plot. The histograms are read on a worker
 * thread, all of the tensor's each time (a few hundred of 32 bins), when
 * the layer opens and whenever the dashboard says new points were stored,
 * so the plot follows a run another process trains as the others do. */
#include "ui/training/nl-layers-panel-private.h"
#include <glib/gi18n.h>
#include "projects/nl-project-layers.h"

#include <string.h>

typedef struct {
  NlWorkspace *ws;
  gint64 run;
  char *tensor;
  gboolean is_grad;
  GArray *hists;               /* NlLayerHistogram, oldest first */
} Load;

static void
load_free (Load *ld)
{
  g_clear_object (&ld->ws);
  g_free (ld->tensor);
  g_clear_pointer (&ld->hists, g_array_unref);
  g_free (ld);
}

static void
load_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Load *ld = data;
  GError *error = NULL;
  if (!(ld->hists = nl_project_list_layer_histograms (nl_workspace_get_project (ld->ws), ld->run, ld->tensor,
                                                      ld->is_grad, &error)))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void start_load (NlLayersPanel *self);

static void
load_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlLayersPanel *self = NL_LAYERS_PANEL (source);
  Load *ld = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;

  self->loading = FALSE;
  if (!g_task_propagate_boolean (G_TASK (res), &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_warning ("layer histograms: %s", error->message);
      return;
    }
  if (!self->layers)
    return;  /* disposed meanwhile */
  /* what was read is still what is shown: draw it */
  if (ld->ws == self->ws && ld->run == self->run && self->ridge_tensor && !strcmp (ld->tensor, self->ridge_tensor)
      && ld->is_grad == gtk_toggle_button_get_active (self->grad_toggle))
    {
      nl_ridge_plot_clear (self->ridge);
      for (guint i = 0; i < ld->hists->len; i++)
        {
          const NlLayerHistogram *h = &g_array_index (ld->hists, NlLayerHistogram, i);
          nl_ridge_plot_add (self->ridge, h->step, h->lo, h->hi, h->counts, h->n_bins);
        }
    }
  if (self->load_again)
    start_load (self);
}

static void
start_load (NlLayersPanel *self)
{
  g_autoptr (GTask) task = NULL;
  Load *ld;

  self->load_again = FALSE;
  if (!self->ridge_tensor || !self->ws || self->run <= 0)
    return;
  if (self->loading)
    {
      self->load_again = TRUE;
      return;
    }
  self->loading = TRUE;
  ld = g_new0 (Load, 1);
  ld->ws = g_object_ref (self->ws);
  ld->run = self->run;
  ld->tensor = g_strdup (self->ridge_tensor);
  ld->is_grad = gtk_toggle_button_get_active (self->grad_toggle);
  if (!self->load_cancel)
    self->load_cancel = g_cancellable_new ();
  task = g_task_new (self, self->load_cancel, load_done, NULL);
  g_task_set_task_data (task, ld, (GDestroyNotify) load_free);
  g_task_run_in_thread (task, load_thread);
}

static void
update_title (NlLayersPanel *self)
{
  gboolean grad = gtk_toggle_button_get_active (self->grad_toggle);
  g_autofree char *title = NULL;
  if (!self->ridge_tensor)
    return;
  /* TRANSLATORS: the ridge plot's title: a tensor ("fc1.weight"), then what of it */
  title = g_strdup_printf (_("%s — %s over time"), self->ridge_tensor, grad ? _("gradients") : _("weights"));
  nl_ridge_plot_set_title (self->ridge, title);
}

/* The tensor or weights/gradients switch changed: read it afresh. */
static void
choice_changed (NlLayersPanel *self)
{
  Layer *l;
  guint i;
  if (self->filling || !self->ridge_node || !(l = _nl_layers_panel_find (self, self->ridge_node)))
    return;
  i = gtk_drop_down_get_selected (self->tensor_dropdown);
  if (i < l->tensors->len)
    self->ridge_tensor = g_ptr_array_index (l->tensors, i);
  nl_ridge_plot_clear (self->ridge);
  update_title (self);
  start_load (self);
}

void
_nl_layers_panel_ridge_open (NlLayersPanel *self, Layer *l)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  guint pick = 0;

  g_free (self->ridge_node);
  self->ridge_node = g_strdup (l->node);
  for (guint i = 0; i < l->tensors->len; i++)
    {
      const char *t = g_ptr_array_index (l->tensors, i);
      g_ptr_array_add (names, (gpointer) t);
      if (t == l->primary)
        pick = i;
    }
  g_ptr_array_add (names, NULL);
  self->filling = TRUE;
  gtk_string_list_splice (self->tensor_list, 0, g_list_model_get_n_items (G_LIST_MODEL (self->tensor_list)),
                          (const char *const *) names->pdata);
  gtk_drop_down_set_selected (self->tensor_dropdown, pick);
  self->filling = FALSE;
  /* a layer without parameters (a ReLU) has activations only: nothing to draw */
  self->ridge_tensor = l->tensors->len ? g_ptr_array_index (l->tensors, pick) : NULL;
  nl_ridge_plot_clear (self->ridge);
  if (self->ridge_tensor)
    update_title (self);
  else
    {
      g_autofree char *title = g_strdup_printf (_("%s has no parameters: no histograms"), l->node);
      nl_ridge_plot_set_title (self->ridge, title);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->tensor_dropdown), l->tensors->len > 1);
  if (!gtk_widget_get_visible (self->ridge_box))
    {
      /* the rows keep about two fifths, enough to pick another layer */
      int h = gtk_widget_get_height (GTK_WIDGET (self->paned));
      gtk_widget_set_visible (self->ridge_box, TRUE);
      if (h > 0)
        gtk_paned_set_position (self->paned, MAX (h * 2 / 5, 100));
    }
  gtk_list_box_select_row (self->list, l->row);
  gtk_widget_grab_focus (GTK_WIDGET (l->row));  /* scrolls the row into view */
  start_load (self);
}

void
_nl_layers_panel_ridge_close (NlLayersPanel *self)
{
  g_clear_pointer (&self->ridge_node, g_free);
  self->ridge_tensor = NULL;
  nl_ridge_plot_clear (self->ridge);
  nl_ridge_plot_set_title (self->ridge, NULL);
  gtk_widget_set_visible (self->ridge_box, FALSE);
  gtk_list_box_unselect_all (self->list);
}

GtkWidget *
_nl_layers_panel_ridge_init (NlLayersPanel *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *label = gtk_label_new (_("Histograms over time"));
  GtkWidget *close = gtk_button_new_from_icon_name ("window-close-symbolic");
  GtkWidget *frame = gtk_frame_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_add_css_class (label, "heading");
  gtk_widget_set_hexpand (label, TRUE);
  self->tensor_list = gtk_string_list_new (NULL);
  self->tensor_dropdown = GTK_DROP_DOWN (gtk_drop_down_new (G_LIST_MODEL (g_object_ref (self->tensor_list)), NULL));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->tensor_dropdown), _("The layer's parameter tensor"));
  self->grad_toggle = GTK_TOGGLE_BUTTON (gtk_toggle_button_new_with_mnemonic (_("_Gradients")));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->grad_toggle),
                               _("Show the gradients' histograms instead of the weights'"));
  gtk_widget_set_tooltip_text (close, _("Close the histograms"));
  gtk_widget_add_css_class (close, "flat");
  g_signal_connect_object (self->tensor_dropdown, "notify::selected", G_CALLBACK (choice_changed), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->grad_toggle, "toggled", G_CALLBACK (choice_changed), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (close, "clicked", G_CALLBACK (_nl_layers_panel_ridge_close), self, G_CONNECT_SWAPPED);
  gtk_box_append (GTK_BOX (bar), label);
  gtk_box_append (GTK_BOX (bar), GTK_WIDGET (self->tensor_dropdown));
  gtk_box_append (GTK_BOX (bar), GTK_WIDGET (self->grad_toggle));
  gtk_box_append (GTK_BOX (bar), close);

  self->ridge = NL_RIDGE_PLOT (nl_ridge_plot_new ());
  gtk_widget_set_vexpand (GTK_WIDGET (self->ridge), TRUE);
  gtk_frame_set_child (GTK_FRAME (frame), GTK_WIDGET (self->ridge));
  gtk_box_append (GTK_BOX (box), bar);
  gtk_box_append (GTK_BOX (box), frame);
  gtk_widget_set_margin_top (box, 6);
  gtk_widget_set_visible (box, FALSE);
  self->ridge_box = box;
  return box;
}

void
_nl_layers_panel_ridge_dispose (NlLayersPanel *self)
{
  g_cancellable_cancel (self->load_cancel);
  g_clear_object (&self->load_cancel);
  g_clear_pointer (&self->ridge_node, g_free);
  g_clear_object (&self->tensor_list);
  g_clear_object (&self->ws);
}

void
nl_layers_panel_set_run (NlLayersPanel *self, NlWorkspace *ws, gint64 run)
{
  g_return_if_fail (NL_IS_LAYERS_PANEL (self));
  if (self->ws == ws && self->run == run)
    return;
  g_set_object (&self->ws, ws);
  self->run = run;
  nl_ridge_plot_clear (self->ridge);
  start_load (self);
}

void
nl_layers_panel_refresh (NlLayersPanel *self)
{
  g_return_if_fail (NL_IS_LAYERS_PANEL (self));
  if (self->ridge_node)
    start_load (self);
}

gboolean
nl_layers_panel_open_layer (NlLayersPanel *self, const char *node)
{
  Layer *l;
  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), FALSE);
  if (!(l = _nl_layers_panel_find (self, node)))
    return FALSE;
  _nl_layers_panel_ridge_open (self, l);
  return TRUE;
}

NlRidgePlot *
nl_layers_panel_get_ridge_plot (NlLayersPanel *self)
{
  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), NULL);
  return self->ridge;
}

const char *
nl_layers_panel_get_ridge_tensor (NlLayersPanel *self)
{
  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), NULL);
  return self->ridge_tensor;
}

void
nl_layers_panel_set_ridge_gradients (NlLayersPanel *self, gboolean gradients)
{
  g_return_if_fail (NL_IS_LAYERS_PANEL (self));
  gtk_toggle_button_set_active (self->grad_toggle, gradients);
}

gboolean
nl_layers_panel_is_loading (NlLayersPanel *self)
{
  g_return_val_if_fail (NL_IS_LAYERS_PANEL (self), FALSE);
  return self->loading || self->load_again;
}
