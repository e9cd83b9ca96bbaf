/* nl-window-private.h — the window's struct, shared by nl-window.c and
 * nl-window-actions.c. */
#pragma once

#include "ui/network/nl-network-page.h"
#include "ui/data/nl-data-page.h"
#include "ui/experiments/nl-experiments-page.h"
#include "ui/training/nl-training-page.h"
#include "ui/nl-window.h"

struct _NlWindow {
  AdwApplicationWindow parent_instance;

  /* template children */
  AdwToastOverlay *toast_overlay;
  GtkLabel *project_label;
  GtkMenuButton *project_button;
  AdwViewSwitcherTitle *switcher_title;
  GtkStack *main_stack;
  GtkSpinner *loading_spinner;
  AdwViewStack *view_stack;
  NlNetworkPage *network_page;
  NlDataPage *data_page;
  NlTrainingPage *training_page;
  NlExperimentsPage *experiments_page;

  NlWorkspace *ws;
  GCancellable *opening;      /* the project being opened, NULL when none */
  GMenu *recent_menu;
  GSettings *settings;
};

/* nl-window-actions.c */
void _nl_window_install_actions (NlWindowClass *klass);
void _nl_window_update_actions (NlWindow *win);
void _nl_window_update_recent_menu (NlWindow *win);
