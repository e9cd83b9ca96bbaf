/* nl-test-training.h — the Training page's tests' fixture: a real project
 * (the sample's networks) with a tiny MNIST-format dataset written beside
 * it and pipelines of it ("tiny": batch 64, "tiny16": batch 16, "missing":
 * a folder that is not there), the page shown in a window on it; and the
 * ways those tests drive its form and read its run. */
#pragma once

#include <adwaita.h>

#include "ui/training/nl-training-page.h"
#include "ui/nl-workspace.h"

typedef struct {
  char *dir, *path, *data;
  NlWorkspace *ws;
  NlProject *p;              /* the workspace's */
  NlTrainingPage *page;
  GtkWindow *win;
  guint changed;             /* every ::changed flag seen */
} NlTrainingFixture;

void nl_test_training_setup (NlTrainingFixture *f, gconstpointer data);
void nl_test_training_teardown (NlTrainingFixture *f, gconstpointer data);
/* (NlTrainingFixture *): the form's lists and devices are read. */
gboolean nl_test_training_ready (gpointer data);
/* Chooses ITEM in the combo row FIELD (fails the test when it has none). */
void nl_test_training_select (NlTrainingFixture *f, const char *field, const char *item);
GtkSpinButton *nl_test_training_spin (NlTrainingFixture *f, const char *field);
/* mlp on PIPELINE for EPOCHS epochs. */
void nl_test_training_setup_run (NlTrainingFixture *f, const char *pipeline, int epochs);
/* Whether the button of ACTION is sensitive (the action's state). */
gboolean nl_test_training_action_enabled (NlTrainingFixture *f, const char *action);
void nl_test_training_activate (NlTrainingFixture *f, const char *action);
/* Waits (up to 2 minutes) for the page's run to finish, fail or stop. */
void nl_test_training_wait_end (NlTrainingFixture *f);
gsize nl_test_training_n_points (NlTrainingFixture *f, const char *plot, guint series);
guint nl_test_training_count_metrics (NlTrainingFixture *f, gint64 run, const char *name);
gboolean nl_test_training_banner_shown (NlTrainingFixture *f);
