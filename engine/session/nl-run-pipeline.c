/* nl-run-pipeline.c — a project's pipeline as run settings. */
#include "engine/session/nl-run-pipeline.h"
#include "engine/data/nl-loader.h"
#include "engine/session/nl-data-preview.h"

#include <math.h>
#include <string.h>

/* The single value of a normalize parameter ("0.2860"); FALSE for one per
 * channel ("0.49/0.48/0.45"). */
static gboolean
single_value (const char *text, float *v)
{
  char *end = NULL;
  double d;
  if (!text || strchr (text, '/'))
    return FALSE;
  d = g_ascii_strtod (text, &end);
  if (end == text || *end || !isfinite (d))
    return FALSE;
  *v = (float) d;
  return TRUE;
}

gboolean
nl_run_config_apply_pipeline (NlRunConfig *rc, const NlPipelineInfo *pl, GError **error)
{
  NlPipelineExtra x;
  g_autoptr (GError) local = NULL;
  g_autoptr (GPtrArray) steps = NULL;

  if (!nl_pipeline_extra_parse (pl->extra_json, &x, &local))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "pipeline “%s”: %s", pl->name, local->message);
      return FALSE;
    }
  /* the input normalisation the CLI picks for the dataset... */
  nl_run_config_set_dataset (rc, pl->dataset_spec);
  nl_run_config_set_text (&rc->augment, pl->transforms && *pl->transforms ? pl->transforms : NULL);
  rc->batch_size = pl->batch_size > 0 ? pl->batch_size : 128;
  rc->workers = CLAMP (pl->workers, 0, NL_LOADER_MAX_WORKERS);
  rc->data.val_fraction = pl->split;
  nl_run_config_set_text ((char **) &rc->data.label_column, x.label_column);
  rc->data.regression = x.regression;
  rc->data.image_width = x.image_width;
  rc->data.image_height = x.image_height;
  if (x.regression)
    nl_run_config_set_text (&rc->loss, "L2Loss");
  nl_pipeline_extra_clear (&x);
  /* ...unless the pipeline normalises itself: evaluation (which does not
   * run the training transforms) must then use the same numbers */
  steps = nl_transform_steps_parse (rc->augment, NULL);
  for (guint i = 0; steps && i < steps->len; i++)
    {
      NlTransformStep *s = g_ptr_array_index (steps, i);
      float m, d;
      if (!strcmp (s->info->name, "normalize") && single_value (s->values[0], &m) && single_value (s->values[1], &d)
          && d > 0)
        {
          rc->mean = m;
          rc->std = d;
        }
    }
  return TRUE;
}
