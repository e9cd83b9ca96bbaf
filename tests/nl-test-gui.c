/* nl-test-gui.c — GUI test helpers (see nl-test-gui.h). */
#include "tests/nl-test-gui.h"
#include "ui/nl-screenshot.h"

#include <stdio.h>
#include <stdlib.h>

void
nl_test_gui_init (int *argc, char ***argv)
{
  /* isolated home, config and data dirs, but the system's XDG_DATA_DIRS:
   * libadwaita 1.2 looks up its GSettings schema there unconditionally */
  g_autofree char *data_dirs = g_strdup (g_getenv ("XDG_DATA_DIRS"));
  g_test_init (argc, argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  if (data_dirs)
    g_setenv ("XDG_DATA_DIRS", data_dirs, TRUE);
  else
    g_unsetenv ("XDG_DATA_DIRS");
  /* no accessibility bus or session bus under Xvfb: GTK warns about both;
   * warnings stay visible but only criticals fail a test */
  g_setenv ("GTK_A11Y", "none", TRUE);
  g_setenv ("NO_AT_BRIDGE", "1", TRUE);
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  if (!gtk_init_check ())
    {
      printf ("1..0 # SKIP no display (run under xvfb-run -a)\n");
      exit (77);
    }
  adw_init ();
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

void
nl_test_pump (guint ms)
{
  gboolean done = FALSE;
  g_timeout_add (ms, set_flag, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

gboolean
nl_test_wait_until (gboolean (*cond) (gpointer data), gpointer data, guint timeout_ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  gboolean ok;
  while (!(ok = cond (data)) && g_get_monotonic_time () < end)
    nl_test_pump (10);
  return ok;
}

GtkWindow *
nl_test_show_in_window (GtkWidget *child, int w, int h)
{
  GtkWindow *win = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_default_size (win, w, h);
  gtk_window_set_child (win, child);
  gtk_window_present (win);
  for (int i = 0; i < 200 && (!gtk_widget_get_mapped (child) || gtk_widget_get_width (child) == 0); i++)
    nl_test_pump (10);
  nl_test_pump (50);
  return win;
}

double
nl_test_drawn_fraction (GtkWidget *widget)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) tex = NULL;
  int w, h;
  guint32 *px;
  GHashTable *counts;
  guint best = 0;
  gsize n;
  /* a widget waiting for its next layout renders nothing; on a loaded
   * machine the frame clock may take a while to get there */
  for (int i = 0; i < 300 && !(tex = nl_widget_render_texture (widget, NULL)); i++)
    nl_test_pump (10);
  if (!tex)
    tex = nl_widget_render_texture (widget, &error);
  if (!tex)
    {
      g_test_message ("cannot render %s: %s", G_OBJECT_TYPE_NAME (widget), error->message);
      return 0;
    }
  w = gdk_texture_get_width (tex);
  h = gdk_texture_get_height (tex);
  n = (gsize) w * h;
  px = g_new (guint32, n);
  gdk_texture_download (tex, (guchar *) px, (gsize) w * 4);
  counts = g_hash_table_new (NULL, NULL);
  for (gsize i = 0; i < n; i++)
    {
      guint c = GPOINTER_TO_UINT (g_hash_table_lookup (counts, GUINT_TO_POINTER (px[i]))) + 1;
      g_hash_table_insert (counts, GUINT_TO_POINTER (px[i]), GUINT_TO_POINTER (c));
      best = MAX (best, c);
    }
  g_hash_table_unref (counts);
  g_free (px);
  return 1.0 - (double) best / n;
}
