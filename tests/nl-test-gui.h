/* nl-test-gui.h — helpers for GUI tests: they run under `xvfb-run -a` with
 * GSK_RENDERER=cairo and the memory GSettings backend (tests/meson.build
 * sets these), in isolated XDG directories. */
#pragma once

#include <adwaita.h>

#include "core/nl-shape.h"
#include "projects/nl-project.h"

/* g_test_init with isolated dirs, then GTK and libadwaita. Without a
 * display it prints why and exits 77 (meson: skipped). */
void nl_test_gui_init (int *argc, char ***argv);
/* Runs the main context for ms milliseconds. */
void nl_test_pump (guint ms);
/* Runs the main context until cond (data) is TRUE or timeout_ms passed;
 * returns the last value of cond. */
gboolean nl_test_wait_until (gboolean (*cond) (gpointer data), gpointer data, guint timeout_ms);
/* The first shown toplevel of TYPE (e.g. ADW_TYPE_MESSAGE_DIALOG), or NULL. */
GtkWindow *nl_test_find_window (GType type);
/* Runs the main context until a toplevel of TYPE is shown or timeout_ms
 * passed; returns it, or NULL. */
GtkWindow *nl_test_wait_window (GType type, guint timeout_ms);
/* The first shown AdwMessageDialog, waiting up to timeout_ms (may be 0)
 * for one; NULL if none. */
AdwMessageDialog *nl_test_find_message_dialog (guint timeout_ms);
/* Waits for the modal dialog of a file chooser (GtkFileChooserNative shows
 * one without a portal) titled TITLE; fails the test when none comes. */
GtkFileChooser *nl_test_wait_chooser (const char *title, guint timeout_ms);
/* Selects FILE in that dialog (a save dialog: its folder and name) and
 * accepts it. */
void nl_test_choose_file (GtkFileChooser *chooser, GFile *file);
/* A shown window around child (default size w x h), realized and laid out. */
GtkWindow *nl_test_show_in_window (GtkWidget *child, int w, int h);
/* Fraction of pixels in the widget's rendering that differ from its most
 * common colour: a cheap "something was drawn" measure. */
double nl_test_drawn_fraction (GtkWidget *widget);
/* With NL_SHOT_DIR=DIR set: WIDGET (a window) as DIR/NAME, after a
 * moment for it to settle; without it, nothing. */
void nl_test_save_shot (GtkWidget *widget, const char *name);

/* A real checkpoint of the network NET_JSON built for SAMPLE (weights from
 * SEED, SGD state) as run RUN's checkpoint at EPOCH (step 10 * EPOCH) with
 * test accuracy ACCURACY, keeping the last EPOCH. */
void nl_test_add_checkpoint (NlProject *p, gint64 run, const char *net_json, const NlShape *sample, guint64 seed,
                             int epoch, double accuracy);

/* A small conv net (conv1 4x3x3, relu1, pool1 2x2, flat, fc1 16, act, fc2
 * 10) trained for 2 epochs (nl_test_tiny_train_config) on the generated
 * IDX dataset in dataset_dir, as network "small" of p: the run's id. The
 * quantize and explain dialogs' tests use it. */
gint64 nl_test_train_small_conv (NlProject *p, const char *dataset_dir);

/* A GUI test's scratch data: a new IDX dataset of n_train and n_test
 * images (nl_test_write_idx_dataset) in a fresh *data_dir and a new
 * project p.netloom in a fresh *work_dir, both named after tag; the
 * project is returned. nl_test_scratch_remove deletes and frees both. */
NlProject *nl_test_scratch_project (const char *tag, int n_train, int n_test, char **data_dir, char **work_dir);
void nl_test_scratch_remove (char *data_dir, char *work_dir);
