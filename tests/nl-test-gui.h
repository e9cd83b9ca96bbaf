/* nl-test-gui.h — helpers for GUI tests: they run under `xvfb-run -a` with
 * GSK_RENDERER=cairo and the memory GSettings backend (tests/meson.build
 * sets these), in isolated XDG directories. */
#pragma once

#include <adwaita.h>

/* g_test_init with isolated dirs, then GTK and libadwaita. Without a
 * display it prints why and exits 77 (meson: skipped). */
void nl_test_gui_init (int *argc, char ***argv);
/* Runs the main context for ms milliseconds. */
void nl_test_pump (guint ms);
/* Runs the main context until cond (data) is TRUE or timeout_ms passed;
 * returns the last value of cond. */
gboolean nl_test_wait_until (gboolean (*cond) (gpointer data), gpointer data, guint timeout_ms);
/* A shown window around child (default size w x h), realized and laid out. */
GtkWindow *nl_test_show_in_window (GtkWidget *child, int w, int h);
/* Fraction of pixels in the widget's rendering that differ from its most
 * common colour: a cheap "something was drawn" measure. */
double nl_test_drawn_fraction (GtkWidget *widget);
