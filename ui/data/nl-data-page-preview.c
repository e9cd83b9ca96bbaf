/* nl-data-page-preview.c — the Data page's preview: nl_data_preview_load
 * in a GTask thread (a newer request cancels the older one, whose result
 * is dropped), the grid of samples, the histogram and the summary. */
#include "ui/data/nl-data-page-private.h"
#include <glib/gi18n.h>

#include <math.h>
#include <string.h>

#define N_PREVIEW 32
#define TILE 96          /* preview tiles are about this many pixels a side */
#define RELOAD_DELAY_MS 120  /* edits come in bursts */

/* sample i scaled by an integer factor (nearest) to about TILE pixels;
 * 1-d samples are shown as a square of their values */
static GdkTexture *
sample_texture (const NlDataPreview *p, int i)
{
  const float *s = nl_data_preview_sample (p, i);
  int64_t numel = nl_shape_numel (&p->shape);
  int nd = p->shape.ndim, c = nd == 3 ? (int) p->shape.d[0] : 1;
  int h = nd >= 2 ? (int) p->shape.d[nd - 2] : (int) ceil (sqrt ((double) numel));
  int w = nd >= 2 ? (int) p->shape.d[nd - 1] : h;
  int side = MAX (MAX (h, w), 1);
  int ow = side <= TILE ? w * MAX (TILE / side, 1) : MAX (w * TILE / side, 1);
  int oh = side <= TILE ? h * MAX (TILE / side, 1) : MAX (h * TILE / side, 1);
  guint8 *px = g_malloc ((gsize) ow * oh * 3);
  g_autoptr (GBytes) bytes = NULL;

  for (int y = 0; y < oh; y++)
    for (int x = 0; x < ow; x++)
      {
        int64_t at = (int64_t) (y * h / oh) * w + x * w / ow;
        for (int ch = 0; ch < 3; ch++)
          {
            int64_t k = c == 3 ? ch * (int64_t) h * w + at : at;
            float v = k < numel ? s[k] : 0;
            px[((gsize) y * ow + x) * 3 + ch] = (guint8) lrintf (v * 255);
          }
      }
  bytes = g_bytes_new_take (px, (gsize) ow * oh * 3);
  return gdk_memory_texture_new (ow, oh, GDK_MEMORY_R8G8B8, bytes, (gsize) ow * 3);
}

void
_nl_data_page_clear_preview (NlDataPage *page)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (page->preview_grid))))
    gtk_flow_box_remove (page->preview_grid, child);
  g_clear_pointer (&page->preview, nl_data_preview_unref);
  nl_class_histogram_set (page->histogram, 0, NULL, NULL);
  gtk_label_set_label (page->samples_label, "—");
  gtk_label_set_label (page->shape_label, "—");
  gtk_label_set_label (page->out_shape_label, "—");
  gtk_label_set_label (page->classes_label, "—");
  gtk_label_set_label (page->preview_info, "");
  adw_preferences_group_set_description (page->summary_group, NULL);
  gtk_widget_set_visible (page->details_box, FALSE);
  _nl_data_page_sequence_clear (page);
}

/* "1×28×28" */
static char *
format_shape (const NlShape *s)
{
  GString *out = g_string_new (NULL);
  for (int i = 0; i < s->ndim; i++)
    g_string_append_printf (out, "%s%" G_GINT64_FORMAT, i ? "×" : "", s->d[i]);
  return g_string_free (out, FALSE);
}

static void
show_message (NlDataPage *page, const char *error, const char *hint)
{
  gboolean toast = error && g_strcmp0 (error, page->error) != 0;
  _nl_data_page_clear_preview (page);
  g_free (page->error);
  page->error = g_strdup (error);
  gtk_label_set_label (page->error_label, error ? error : "");
  gtk_widget_set_visible (page->error_box, error != NULL);
  gtk_label_set_label (page->hint_label, hint ? hint : "");
  gtk_widget_set_visible (GTK_WIDGET (page->hint_label), hint != NULL);
  if (toast && page->ws)
    nl_workspace_toast (page->ws, "%s", error);
}

static void
show_preview (NlDataPage *page, NlDataPreview *p)
{
  g_autofree char *count = nl_data_format_count (p->length);
  g_autofree char *in_shape = format_shape (&p->sample_shape), *out_shape = format_shape (&p->shape);

  show_message (page, NULL, NULL);
  page->preview = p;
  /* text and series: their own preview instead of tiles */
  gboolean sequence = _nl_data_page_sequence_show (page, p);
  for (int i = 0; !sequence && i < p->n_samples; i++)
    {
      g_autoptr (GdkTexture) tex = sample_texture (p, i);
      g_autofree char *label = nl_data_preview_label_text (p, i);
      g_autofree char *tip = g_strdup_printf ("#%" G_GINT64_FORMAT " · %s", p->indices[i], label);
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
      GtkWidget *pic = gtk_picture_new_for_paintable (GDK_PAINTABLE (tex));
      GtkWidget *text = gtk_label_new (label);
      gtk_picture_set_can_shrink (GTK_PICTURE (pic), FALSE);
      gtk_widget_set_halign (pic, GTK_ALIGN_CENTER);
      gtk_label_set_ellipsize (GTK_LABEL (text), PANGO_ELLIPSIZE_END);
      gtk_label_set_max_width_chars (GTK_LABEL (text), 10);
      gtk_widget_add_css_class (text, "caption");
      gtk_box_append (GTK_BOX (box), pic);
      gtk_box_append (GTK_BOX (box), text);
      gtk_widget_set_tooltip_text (box, tip);
      gtk_flow_box_append (page->preview_grid, box);
    }
  nl_class_histogram_set (page->histogram, p->n_classes, p->class_names, p->class_counts);
  gtk_widget_set_visible (page->histogram_group, p->n_classes > 0);
  gtk_widget_set_visible (page->details_box, TRUE);
  gtk_label_set_label (page->samples_label, count);
  gtk_label_set_label (page->shape_label, in_shape);
  gtk_label_set_label (page->out_shape_label, out_shape);
  {
    g_autofree char *classes = p->n_classes ? g_strdup_printf ("%d", p->n_classes) : g_strdup ("none (regression)");
    g_autofree char *info = g_strdup_printf (_("%d of %s training samples · %s"), p->n_samples, count, p->transforms);
    gtk_label_set_label (page->classes_label, classes);
    gtk_label_set_label (page->preview_info, info);
  }
  {
    g_autofree char *desc = g_markup_escape_text (p->description ? p->description : "", -1);
    adw_preferences_group_set_description (page->summary_group, desc);  /* the group's label takes markup */
  }
}

typedef struct {
  NlPipelineInfo *pl;
  guint64 seed;
  NlDataPreview *previous;
  NlWorkspace *ws;  /* the busy count to give back */
  guint generation;
} LoadData;

static void
load_data_free (LoadData *d)
{
  nl_pipeline_info_free (d->pl);
  g_clear_pointer (&d->previous, nl_data_preview_unref);
  g_clear_object (&d->ws);
  g_free (d);
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadData *d = task_data;
  GError *error = NULL;
  NlDataPreview *p = nl_data_preview_load (d->pl, N_PREVIEW, d->seed, d->previous, cancellable, &error);
  if (p)
    g_task_return_pointer (task, p, (GDestroyNotify) nl_data_preview_unref);
  else
    g_task_return_error (task, error);
}

static void
load_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  NlDataPage *page = NL_DATA_PAGE (source);
  LoadData *d = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  NlDataPreview *p = g_task_propagate_pointer (G_TASK (res), &error);

  nl_workspace_busy_pop (d->ws);
  if (d->generation != page->generation)  /* a newer request is on its way */
    {
      g_clear_pointer (&p, nl_data_preview_unref);
      return;
    }
  gtk_spinner_stop (page->spinner);
  if (p)
    show_preview (page, p);
  else
    show_message (page, error->message, NULL);
}

static char *
request_key (NlDataPage *page, const NlPipelineInfo *pl)
{
  return g_strdup_printf ("%s\n%s\n%g\n%s\n%" G_GUINT64_FORMAT, pl->dataset_spec, pl->transforms ? pl->transforms : "",
                          pl->split, pl->extra_json ? pl->extra_json : "", page->seed);
}

static void
start_load (NlDataPage *page)
{
  g_autoptr (GTask) task = NULL;
  LoadData *d;
  int k;
  const NlDatasetKind *kind = _nl_data_page_selected_kind (page, &k);

  if (page->cancel)
    g_cancellable_cancel (page->cancel);
  g_clear_object (&page->cancel);
  page->generation++;
  gtk_spinner_stop (page->spinner);
  if (!page->ws || !page->current)
    {
      show_message (page, NULL, page->ws ? _("No pipeline: create one with the + button") : NULL);
      return;
    }
  if (!page->raw_spec && !kind->default_path && !page->paths[k])
    {
      g_autofree char *hint = g_strdup (kind->path_is_folder ? _("Choose a folder to preview it")
                                                              : _("Choose a file to preview it"));
      show_message (page, NULL, hint);
      return;
    }
  d = g_new0 (LoadData, 1);
  d->pl = nl_data_page_dup_pipeline (page);
  d->seed = page->seed;
  d->previous = page->preview && !page->reopen ? nl_data_preview_ref (page->preview) : NULL;
  page->reopen = FALSE;
  d->ws = g_object_ref (page->ws);
  d->generation = page->generation;
  page->cancel = g_cancellable_new ();
  task = g_task_new (page, page->cancel, load_done, NULL);
  g_task_set_task_data (task, d, (GDestroyNotify) load_data_free);
  nl_workspace_busy_push (page->ws);
  gtk_spinner_start (page->spinner);
  g_task_run_in_thread (task, load_thread);
}

static gboolean
reload_timeout (gpointer data)
{
  NlDataPage *page = data;
  g_autoptr (NlWorkspace) ws = g_steal_pointer (&page->reload_ws);
  page->reload_id = 0;
  start_load (page);
  if (ws)
    nl_workspace_busy_pop (ws);
  return G_SOURCE_REMOVE;
}

static void
cancel_reload (NlDataPage *page)
{
  g_autoptr (NlWorkspace) ws = g_steal_pointer (&page->reload_ws);
  g_clear_handle_id (&page->reload_id, g_source_remove);
  if (ws)
    nl_workspace_busy_pop (ws);
}

/* The workspace is busy from now, so screenshots and tests wait. */
void
_nl_data_page_schedule_reload (NlDataPage *page, gboolean force)
{
  g_autoptr (NlPipelineInfo) pl = nl_data_page_dup_pipeline (page);
  g_autofree char *key = pl ? request_key (page, pl) : g_strdup ("");

  if (!force && g_strcmp0 (key, page->requested_key) == 0)
    return;
  g_free (page->requested_key);
  page->requested_key = g_steal_pointer (&key);
  cancel_reload (page);
  if (!page->ws)
    {
      start_load (page);
      return;
    }
  page->reload_ws = g_object_ref (page->ws);
  nl_workspace_busy_push (page->ws);
  page->reload_id = g_timeout_add (RELOAD_DELAY_MS, reload_timeout, page);
}

void
_nl_data_page_stop_loading (NlDataPage *page)
{
  cancel_reload (page);
  if (page->cancel)
    g_cancellable_cancel (page->cancel);
  g_clear_object (&page->cancel);
  page->generation++;
  gtk_spinner_stop (page->spinner);
}

NlDataPreview *
nl_data_page_get_preview (NlDataPage *page)
{
  g_return_val_if_fail (NL_IS_DATA_PAGE (page), NULL);
  return page->preview;
}

const char *
nl_data_page_get_error (NlDataPage *page)
{
  g_return_val_if_fail (NL_IS_DATA_PAGE (page), NULL);
  return page->error;
}
