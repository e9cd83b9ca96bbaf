/* nl-evaluation-window.c — the evaluation's own window (see
 * nl-evaluation-window.h). */
#include "ui/experiments/nl-evaluation-window.h"
#include <glib/gi18n.h>

#include "ui/experiments/nl-activation-view.h"
#include "ui/experiments/nl-evaluation-view.h"
#include "ui/experiments/nl-generate-box.h"
#include "engine/session/nl-data-preview.h"

#include <string.h>

/* What the window evaluates; its data, freed with it. */
typedef struct {
  NlWorkspace *ws;
  gint64 run;
  char *which;
  GtkWidget *view, *precision, *stack, *activations;
  GtkWidget *generate;         /* a language model's generation box; NULL for other runs */
  gboolean activations_open;   /* opened on first view: it loads a model of its own */
} EvalWindow;

static void
eval_window_free (EvalWindow *e)
{
  g_clear_object (&e->ws);
  g_free (e->which);
  g_free (e);
}

static EvalWindow *
eval_window (GtkWindow *window)
{
  return g_object_get_data (G_OBJECT (window), "nl-evaluation-window");
}

/* Whether RUN trained a language model (dataset text-lm:): it writes text. */
static gboolean
is_language_model (const NlRunInfo *info)
{
  g_autoptr (NlPipelineInfo) pl = info && info->pipeline_json ? nl_pipeline_info_from_json (info->pipeline_json, NULL)
                                                              : NULL;
  const NlDatasetKind *kind = pl ? nl_dataset_kind_lookup (pl->dataset_spec, NULL) : NULL;
  return kind && strcmp (kind->name, "text-lm") == 0;
}

static void
precision_changed (GtkDropDown *dd, GParamSpec *pspec, EvalWindow *e)
{
  nl_evaluation_view_load_full (NL_EVALUATION_VIEW (e->view), e->ws, e->run, e->which,
                                gtk_drop_down_get_selected (dd) == 1);
}

static void
page_changed (AdwViewStack *stack, GParamSpec *pspec, EvalWindow *e)
{
  g_autoptr (NlExplainSource) src = NULL;
  if (e->activations_open || g_strcmp0 (adw_view_stack_get_visible_child_name (stack), "activations"))
    return;
  e->activations_open = TRUE;
  src = nl_explain_source_new (e->ws, e->run, e->which);
  nl_activation_view_set_source (NL_ACTIVATION_VIEW (e->activations), src);
}

GtkWindow *
nl_evaluation_window_new (GtkWindow *parent, NlWorkspace *ws, gint64 run, const char *which, gboolean int8)
{
  GtkWidget *w = adw_window_new (), *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0), *header = adw_header_bar_new ();
  const char *const choices[] = { _("fp32 checkpoint"), _("INT8 model"), NULL };
  g_autoptr (NlRunInfo) info = nl_project_get_run (nl_workspace_get_project (ws), run, NULL);
  g_autoptr (GArray) models = nl_project_list_int8_models (nl_workspace_get_project (ws), run, NULL);
  g_autofree char *title = g_strdup_printf (_("Evaluation of %s"), info && info->name ? info->name : _("a run"));
  EvalWindow *e = g_new0 (EvalWindow, 1);

  e->ws = g_object_ref (ws);
  e->run = run;
  e->which = g_strdup (which ? which : "best");
  e->view = nl_evaluation_view_new ();
  e->activations = nl_activation_view_new ();
  e->stack = adw_view_stack_new ();
  e->precision = gtk_drop_down_new_from_strings (choices);
  gtk_widget_set_tooltip_text (e->precision, _("Evaluate the checkpoint's fp32 weights or its INT8 model"));
  gtk_drop_down_set_selected (GTK_DROP_DOWN (e->precision), int8 ? 1 : 0);
  /* a run without INT8 models (Quantize… makes them) has nothing to choose */
  gtk_widget_set_visible (e->precision, int8 || (models && models->len > 0));
  adw_header_bar_pack_start (ADW_HEADER_BAR (header), e->precision);
  adw_view_stack_add_titled_with_icon (ADW_VIEW_STACK (e->stack), e->view, "evaluation", _("Evaluation"),
                                       "view-grid-symbolic");
  adw_view_stack_add_titled_with_icon (ADW_VIEW_STACK (e->stack), e->activations, "activations",
                                       _("Activations"), "view-reveal-symbolic");
  if (is_language_model (info))
    {
      /* beside the evaluation: what the model writes */
      e->generate = nl_generate_box_new ();
      nl_generate_box_set_run (NL_GENERATE_BOX (e->generate), ws, run);
      adw_view_stack_add_titled_with_icon (ADW_VIEW_STACK (e->stack), e->generate, "generate", _("Generate"),
                                           "document-edit-symbolic");
      adw_view_stack_set_visible_child_name (ADW_VIEW_STACK (e->stack), "generate");
    }
  {
    /* the tabs where the window is wide enough, else its title */
    GtkWidget *switcher = adw_view_switcher_title_new ();
    adw_view_switcher_title_set_stack (ADW_VIEW_SWITCHER_TITLE (switcher), ADW_VIEW_STACK (e->stack));
    adw_view_switcher_title_set_title (ADW_VIEW_SWITCHER_TITLE (switcher), title);
    adw_header_bar_set_title_widget (ADW_HEADER_BAR (header), switcher);
  }
  gtk_box_append (GTK_BOX (box), header);
  gtk_widget_set_vexpand (e->stack, TRUE);
  gtk_box_append (GTK_BOX (box), e->stack);
  adw_window_set_content (ADW_WINDOW (w), box);
  gtk_window_set_title (GTK_WINDOW (w), title);
  gtk_window_set_transient_for (GTK_WINDOW (w), parent);
  gtk_window_set_default_size (GTK_WINDOW (w), 1100, 800);
  g_object_set_data_full (G_OBJECT (w), "nl-evaluation-window", e, (GDestroyNotify) eval_window_free);
  g_signal_connect (e->precision, "notify::selected", G_CALLBACK (precision_changed), e);
  g_signal_connect (e->stack, "notify::visible-child-name", G_CALLBACK (page_changed), e);
  gtk_window_present (GTK_WINDOW (w));
  nl_evaluation_view_load_full (NL_EVALUATION_VIEW (e->view), ws, run, e->which, int8);
  return GTK_WINDOW (w);
}

GtkWidget *
nl_evaluation_window_get_view (GtkWindow *window)
{
  EvalWindow *e = eval_window (window);
  g_return_val_if_fail (e != NULL, NULL);
  return e->view;
}

GtkWidget *
nl_evaluation_window_get_precision (GtkWindow *window)
{
  EvalWindow *e = eval_window (window);
  g_return_val_if_fail (e != NULL, NULL);
  return e->precision;
}

GtkWidget *
nl_evaluation_window_get_activations (GtkWindow *window)
{
  EvalWindow *e = eval_window (window);
  g_return_val_if_fail (e != NULL, NULL);
  return e->activations;
}

GtkWidget *
nl_evaluation_window_get_generate_box (GtkWindow *window)
{
  EvalWindow *e = eval_window (window);
  g_return_val_if_fail (e != NULL, NULL);
  return e->generate;
}

void
nl_evaluation_window_show_page (GtkWindow *window, const char *page)
{
  EvalWindow *e = eval_window (window);
  g_return_if_fail (e != NULL);
  adw_view_stack_set_visible_child_name (ADW_VIEW_STACK (e->stack), page);
}
