/* nl-run-pipeline.h — a project's pipeline as run settings: what the GUI
 * trains a pipeline with, and what a stored run's pipeline snapshot is. */
#pragma once

#include "engine/train/nl-run-config.h"
#include "projects/nl-project.h"

G_BEGIN_DECLS

/* The pipeline's dataset, batches, loader workers, transforms and dataset
 * options into rc; the input normalisation the dataset's default
 * (nl_run_config_set_dataset) unless the pipeline normalises itself with
 * single numbers. FALSE with an error naming the pipeline for bad extras. */
gboolean nl_run_config_apply_pipeline (NlRunConfig *rc, const NlPipelineInfo *pl, GError **error);

G_END_DECLS
