/* nl-window.h — the main window: header bar with the project menu, the
 * pages in a view stack, toasts; opens projects off the main thread. */
#pragma once

#include <adwaita.h>

#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_WINDOW (nl_window_get_type ())
G_DECLARE_FINAL_TYPE (NlWindow, nl_window, NL, WINDOW, AdwApplicationWindow)

typedef enum {
  NL_OPEN_EXISTING,  /* refuse a missing file */
  NL_OPEN_CREATE,    /* a new empty project (refuses an existing file) */
  NL_OPEN_SAMPLE,    /* open PATH, creating the sample project there if missing */
} NlOpenMode;

NlWindow *nl_window_new (GtkApplication *app);
/* Signals: ::open-failed (const char *path, const char *message) */
/* Opens in a worker thread; the window shows a spinner meanwhile and the
 * result (or a dialog naming the file and the problem) when done. */
void nl_window_open_project (NlWindow *win, const char *path, NlOpenMode mode);
void nl_window_close_project (NlWindow *win);
/* NULL while no project is open. ::notify::workspace when it changes. */
NlWorkspace *nl_window_get_workspace (NlWindow *win);
/* TRUE while a project is being opened or a page is loading. */
gboolean nl_window_is_busy (NlWindow *win);
void nl_window_show_page (NlWindow *win, const char *name);
const char *nl_window_get_page_name (NlWindow *win);
/* The page widget named network, data, training or experiments. */
GtkWidget *nl_window_get_page (NlWindow *win, const char *name);
void nl_window_toast (NlWindow *win, const char *message);

G_END_DECLS
