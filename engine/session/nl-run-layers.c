/* nl-run-layers.c — layer statistics of a run into its project. */
#include "engine/session/nl-run-layers.h"
#include "projects/nl-project-layers.h"

G_STATIC_ASSERT (NL_LAYER_HIST_BINS == NL_LAYER_STATS_BINS);

static void
point (NlMetricWriter *w, gint64 run, gint64 step, int epoch, const char *what, const char *stat, double v)
{
  g_autofree char *name = g_strdup_printf ("layer/%s/%s", what, stat);
  NlMetricPoint pt = { .run = run, .step = step, .epoch = epoch, .split = "train", .name = name, .value = v };
  nl_metric_writer_add (w, &pt);
}

gboolean
nl_run_layers_record (NlProject *p, NlMetricWriter *w, gint64 run, const NlLayerStatsReport *r, GError **error)
{
  g_autoptr (GArray) hist = g_array_new (FALSE, FALSE, sizeof (NlLayerHistogram));
  for (int i = 0; i < r->n_tensors; i++)
    {
      const NlTensorStats *ts = &r->tensors[i];
      NlLayerHistogram hw = { .step = r->step, .tensor = ts->tensor, .is_grad = FALSE, .lo = ts->w_lo, .hi = ts->w_hi,
                              .n_bins = NL_LAYER_STATS_BINS, .counts = (guint32 *) ts->w_counts };
      NlLayerHistogram hg = { .step = r->step, .tensor = ts->tensor, .is_grad = TRUE, .lo = ts->g_lo, .hi = ts->g_hi,
                              .n_bins = NL_LAYER_STATS_BINS, .counts = (guint32 *) ts->g_counts };
      point (w, run, r->step, r->epoch, ts->tensor, "weight_norm", ts->weight_norm);
      point (w, run, r->step, r->epoch, ts->tensor, "grad_norm", ts->grad_norm);
      point (w, run, r->step, r->epoch, ts->tensor, "update_ratio", ts->update_ratio);
      g_array_append_val (hist, hw);
      g_array_append_val (hist, hg);
    }
  for (int i = 0; i < r->n_nodes; i++)
    {
      const NlActivationStats *a = &r->nodes[i];
      if (!a->seen || !a->node)
        continue;
      point (w, run, r->step, r->epoch, a->node, "act_mean", a->mean);
      point (w, run, r->step, r->epoch, a->node, "act_std", a->std);
      point (w, run, r->step, r->epoch, a->node, "dead_fraction", a->dead_fraction);
    }
  return nl_project_add_layer_histograms (p, run, (const NlLayerHistogram *) hist->data, (int) hist->len, error);
}

void
nl_run_layers_nonfinite (NlMetricWriter *w, gint64 run, int epoch, const NlNonfinite *nf, gint64 step)
{
  point (w, run, step, epoch, nf->node, "first_nonfinite", nf->where == NL_NONFINITE_FORWARD ? 1 : 2);
}
