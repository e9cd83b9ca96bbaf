/* nl-run-model.h — a run's model rebuilt from its stored snapshots
 * (network, settings) with one of its checkpoints loaded: what evaluating,
 * predicting and exporting a run start from. */
#pragma once

#include "engine/data/nl-dataset.h"
#include "engine/graph/nl-model.h"
#include "engine/train/nl-run-config.h"
#include "projects/nl-project.h"

G_BEGIN_DECLS

/* A member of an imported run's stored settings: the model came without
 * an input normalisation ("none"); evaluate and predict say so. */
#define NL_RUN_NO_NORMALISATION "input_normalisation"

/* Everything from the run's snapshots and checkpoint; clear with
 * nl_run_model_clear (g_auto works). */
typedef struct {
  NlRunConfig rc;
  NlNetwork *net;
  NlModel *model;
  NlDataset *ds;          /* the run's test split; NULL when absent on this machine and !need_data */
  gint64 checkpoint;
  int epoch;
  NlShape sample_shape;   /* the dataset's, else the Input node's (a text run: (max_length)) */
  NlVocab *vocab;         /* a text run's vocabulary (rc.data.vocab lends it), else NULL */
  gboolean no_normalisation; /* an imported model without one: rc's mean 0, std 1 are a guess */
} NlRunModel;

/* Loads checkpoint `which` ("best", "last" or an epoch; NULL: the best, or
 * the last where none is best, as in an imported run) of
 * RUN. dataset (may be NULL: the run's) replaces the run's dataset spec;
 * its test split is opened. need_data: that split must open (else the
 * Input's fixed shape will do). Errors name the run, checkpoint or dataset. */
gboolean nl_run_model_load (NlRunModel *l, NlProject *p, gint64 run, const char *which, const char *dataset,
                            gboolean need_data, GError **error);
/* The newest run of the project network `network` that has a checkpoint
 * (trained, or made by importing weights); 0 with an error naming the
 * network when there is none. */
gint64 nl_run_find_for_network (NlProject *p, const char *network, GError **error);
void nl_run_model_clear (NlRunModel *l);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (NlRunModel, nl_run_model_clear)

G_END_DECLS
