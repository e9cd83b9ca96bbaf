/* nl-network-page-shapes.c — the data the Network page's shapes are for:
 * the status bar's pipeline drop-down. As Gluon's deferred shapes, an Input
 * without a fixed shape takes the chosen pipeline's sample shape (after its
 * transforms); the pipeline's dataset is opened on a worker thread, and the
 * analysis runs again when the shape is known. */
#include "engine/session/nl-data-preview.h"
#include <glib/gi18n.h>
#include "ui/network/nl-network-page-private.h"

#include <string.h>

const NlShape *
_nl_network_page_sample_shape (NlNetworkPage *page)
{
  return page->sample.ndim > 0 ? &page->sample : NULL;
}

/* FROM: the pipeline the shape is of (taken); NOTE: why there is none (taken). */
static void
set_sample (NlNetworkPage *page, const NlShape *shape, char *from, char *note)
{
  page->sample = shape ? *shape : NL_SHAPE_ABSENT;
  g_free (page->sample_from);
  page->sample_from = from;
  g_free (page->sample_note);
  page->sample_note = note;
  _nl_network_page_analyze (page);
}

/* "input 3×32×32 from “cifar”": where the Input's shape comes from. */
char *
_nl_network_page_input_text (NlNetworkPage *page, const NlAnalysis *a)
{
  const NlNetwork *net = nl_network_doc_get_network (page->doc);
  g_autofree char *shape = NULL;
  const char *origin;
  int input = -1;

  for (int i = 0; i < a->n_nodes && i < nl_network_n_nodes (net) && input < 0; i++)
    if (strcmp (nl_network_node (net, i)->def->name, "Input") == 0)
      input = i;
  if (input < 0 || a->nodes[input].out.ndim < 1)
    return NULL;
  shape = nl_analysis_format_node_shape (&a->nodes[input]); /* without the batch; ≤T for text */
  if (nl_network_node (net, input)->params[0].n > 0)
    origin = "fixed";
  else if (page->sample.ndim > 0)
    origin = NULL;
  else
    origin = "default";
  if (!origin)
    return g_strdup_printf (_("input %s from “%s”"), shape, page->sample_from);
  if (page->sample_note)
    return g_strdup_printf ("input %s (%s; %s)", shape, origin, page->sample_note);
  return g_strdup_printf ("input %s (%s)", shape, origin);
}

/* ---- the pipeline's sample shape, off the main loop ---- */

static void
shape_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  NlProject *p = g_object_get_data (G_OBJECT (task), "project");
  GError *error = NULL;
  g_autoptr (NlPipelineInfo) pl = nl_project_load_pipeline (p, data, &error);
  /* no samples: only the dataset's shape through the transforms */
  g_autoptr (NlDataPreview) preview = pl ? nl_data_preview_load (pl, 0, 0, NULL, cancellable, &error) : NULL;
  if (!preview)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, g_memdup2 (&preview->shape, sizeof (NlShape)), g_free);
}

static void
shape_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (source);
  g_autoptr (GError) error = NULL;
  g_autofree NlShape *shape = g_task_propagate_pointer (G_TASK (res), &error);
  NlWorkspace *ws = g_object_get_data (G_OBJECT (res), "workspace");
  const char *pipeline = g_task_get_task_data (G_TASK (res));

  nl_workspace_busy_pop (ws);
  /* a newer choice, or the page let go of the project */
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
      || g_task_get_cancellable (G_TASK (res)) != page->shape_loading)
    return;
  g_clear_object (&page->shape_loading);
  if (shape)
    set_sample (page, shape, g_strdup (pipeline), NULL);
  else
    {
      set_sample (page, NULL, NULL, g_strdup_printf ("pipeline “%s”: %s", pipeline, error->message));
      _nl_network_page_problem (page, page->sample_note);
    }
}

/* KEY: the pipeline's JSON, so that a reload of the list (the workspace
 * reports every change another process makes) reopens the dataset only
 * when the pipeline changed. */
static void
load_shape (NlNetworkPage *page, const char *pipeline, char *key)
{
  g_autoptr (GTask) task = NULL;
  if (page->shape_loading)
    g_cancellable_cancel (page->shape_loading);
  g_clear_object (&page->shape_loading);
  g_free (page->pipeline_key);
  page->pipeline_key = key;
  if (!page->ws || !pipeline)
    {
      set_sample (page, NULL, NULL, NULL);
      return;
    }
  page->shape_loading = g_cancellable_new ();
  task = g_task_new (page, page->shape_loading, shape_done, NULL);
  g_task_set_task_data (task, g_strdup (pipeline), g_free);
  g_object_set_data (G_OBJECT (task), "project", nl_workspace_get_project (page->ws));
  g_object_set_data_full (G_OBJECT (task), "workspace", g_object_ref (page->ws), g_object_unref);
  nl_workspace_busy_push (page->ws);
  g_task_run_in_thread (task, shape_thread);
}

static void
pipeline_selected (GtkDropDown *dd, GParamSpec *pspec, NlNetworkPage *page)
{
  guint i = gtk_drop_down_get_selected (dd);
  const char *name = i > 0 && i != GTK_INVALID_LIST_POSITION ? gtk_string_list_get_string (page->pipelines, i) : NULL;
  /* one row of the project: read here, as the list is */
  g_autoptr (NlPipelineInfo) pl = name && page->ws ? nl_project_load_pipeline (nl_workspace_get_project (page->ws),
                                                                               name, NULL)
                                                   : NULL;
  load_shape (page, name, pl ? nl_pipeline_info_to_json (pl) : NULL);
}

void
_nl_network_page_reload_pipelines (NlNetworkPage *page)
{
  g_autoptr (GPtrArray) list = page->ws ? nl_project_list_pipelines (nl_workspace_get_project (page->ws), NULL) : NULL;
  guint old = gtk_drop_down_get_selected (page->pipeline_dropdown), selected = 0;
  g_autofree char *current = old > 0 && old != GTK_INVALID_LIST_POSITION
                               ? g_strdup (gtk_string_list_get_string (page->pipelines, old))
                               : NULL;
  g_autofree char *key = NULL;

  g_signal_handlers_block_by_func (page->pipeline_dropdown, pipeline_selected, page);
  gtk_string_list_splice (page->pipelines, 1, g_list_model_get_n_items (G_LIST_MODEL (page->pipelines)) - 1, NULL);
  for (guint i = 0; list && i < list->len; i++)
    {
      NlPipelineInfo *pl = g_ptr_array_index (list, i);
      if (g_strcmp0 (pl->name, current) == 0)
        {
          selected = i + 1;
          key = nl_pipeline_info_to_json (pl);
        }
      gtk_string_list_append (page->pipelines, pl->name);
    }
  gtk_drop_down_set_selected (page->pipeline_dropdown, selected);
  g_signal_handlers_unblock_by_func (page->pipeline_dropdown, pipeline_selected, page);
  /* a pipeline gone, or edited: the shape again */
  if (current && (selected == 0 || g_strcmp0 (key, page->pipeline_key) != 0))
    load_shape (page, selected > 0 ? current : NULL, g_steal_pointer (&key));
}

void
_nl_network_page_shapes_init (NlNetworkPage *page)
{
  page->sample = NL_SHAPE_ABSENT;
  page->pipelines = gtk_string_list_new ((const char *const[]) { _("No pipeline"), NULL });
  gtk_drop_down_set_model (page->pipeline_dropdown, G_LIST_MODEL (page->pipelines));
  g_signal_connect (page->pipeline_dropdown, "notify::selected", G_CALLBACK (pipeline_selected), page);
}

void
_nl_network_page_shapes_dispose (NlNetworkPage *page)
{
  if (page->shape_loading)
    g_cancellable_cancel (page->shape_loading);
  g_clear_object (&page->shape_loading);
  g_clear_object (&page->pipelines);
  g_clear_pointer (&page->sample_note, g_free);
  g_clear_pointer (&page->sample_from, g_free);
  g_clear_pointer (&page->pipeline_key, g_free);
}
