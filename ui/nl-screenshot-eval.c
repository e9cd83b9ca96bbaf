/* nl-screenshot-eval.c — shots of the evaluation window's Explain panel
 * and Activations tab (see nl-screenshot-eval.h). */
#include "ui/nl-screenshot-eval.h"

#include "ui/experiments/nl-activation-view.h"
#include "ui/experiments/nl-evaluation-view.h"
#include "ui/experiments/nl-evaluation-window.h"
#include "ui/experiments/nl-explain-panel.h"

#define SHOT_PROJECTED 1000   /* test samples in the shot's projection */

static gboolean
explain_pending (NlEvalShot *s, const NlLaunchOptions *o, const char **failure)
{
  NlEvaluationView *view = NL_EVALUATION_VIEW (nl_evaluation_window_get_view (s->window));
  NlExplainPanel *panel = NL_EXPLAIN_PANEL (nl_evaluation_view_get_explain_panel (view));
  NlExplainMethod m = NL_EXPLAIN_GRADCAM;

  if (nl_evaluation_view_is_loading (view) || nl_explain_panel_is_computing (panel))
    return TRUE;
  if (nl_evaluation_view_get_error (view) || nl_explain_panel_get_error (panel))
    {
      s->failure = g_strdup_printf ("the run could not be explained: %s", nl_evaluation_view_get_error (view)
                                    ? nl_evaluation_view_get_error (view) : nl_explain_panel_get_error (panel));
      *failure = s->failure;
      return FALSE;
    }
  switch (s->stage++)
    {
    case 0:
      if (o->explain_method && !nl_explain_method_parse (o->explain_method, &m))
        {
          *failure = "--explain-method must be saliency, gradcam or occlusion";
          return FALSE;
        }
      gtk_drop_down_set_selected (GTK_DROP_DOWN (nl_explain_panel_get_method_dropdown (panel)), m);
      /* the gallery's last: it shows, selected, just above the panel */
      if (!nl_evaluation_view_explain_mistake (view, nl_evaluation_view_get_evaluation (view)->n_misclassified - 1))
        {
          *failure = "the run has no misclassified sample to explain";
          return FALSE;
        }
      return TRUE;
    default:
      return FALSE;
    }
}

static gboolean
activations_pending (NlEvalShot *s, const char **failure)
{
  NlActivationView *v = NL_ACTIVATION_VIEW (nl_evaluation_window_get_activations (s->window));

  if (nl_activation_view_is_busy (v) || (s->stage == 0 && nl_activation_view_get_sample (v) < 0
                                         && !nl_activation_view_get_error (v)))
    return TRUE;
  if (nl_activation_view_get_error (v))
    {
      s->failure = g_strdup_printf ("the run's activations could not be shown: %s", nl_activation_view_get_error (v));
      *failure = s->failure;
      return FALSE;
    }
  switch (s->stage++)
    {
    case 0:
      nl_activation_view_project (v, SHOT_PROJECTED);
      return TRUE;
    case 1:
      /* a point chosen as a click would: its sample shows above, the point ringed */
      nl_activation_view_set_sample (v, 3);
      return TRUE;
    default:
      return FALSE;
    }
}

gboolean
nl_eval_shot_pending (NlEvalShot *s, const NlLaunchOptions *o, GtkWindow *parent, NlWorkspace *ws,
                      const char **failure)
{
  if (!s->window)
    {
      gint64 run = o->explain_run > 0 ? o->explain_run : o->activations_run;
      s->window = g_object_ref (nl_evaluation_window_new (parent, ws, run, "best", FALSE));
      if (o->width > 0 && o->height > 0)
        gtk_window_set_default_size (s->window, o->width, o->height);
      if (o->activations_run > 0)
        nl_evaluation_window_show_page (s->window, "activations");
      return TRUE;
    }
  return o->explain_run > 0 ? explain_pending (s, o, failure) : activations_pending (s, failure);
}

void
nl_eval_shot_clear (NlEvalShot *s)
{
  if (s->window)
    gtk_window_destroy (s->window);
  g_clear_object (&s->window);
  g_clear_pointer (&s->failure, g_free);
}
