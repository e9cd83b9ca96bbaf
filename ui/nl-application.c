/* nl-application.c — app actions (about, quit, style), window creation,
 * the first-start sample project, and the --screenshot mode. */
#include "ui/nl-application.h"
#include <glib/gi18n.h>
#include "ui/experiments/nl-experiments-page.h"
#include "ui/experiments/nl-quantize-dialog.h"
#include "ui/nl-screenshot.h"
#include "ui/nl-screenshot-eval.h"
#include "ui/nl-settings.h"
#include "ui/network/nl-network-doc.h"
#include "ui/network/nl-network-page.h"
#include "ui/training/nl-training-page.h"
#include "ui/nl-window.h"

#include <locale.h>
#include <stdio.h>

#define SCREENSHOT_TIMEOUT_S 120

struct _NlApplication {
  AdwApplication parent_instance;
  NlLaunchOptions opts;
  GSettings *settings;
  /* screenshot mode */
  guint shot_timeout;
  gint64 train_started;
  NlQuantizeDialog *quantize; /* --quantize-run: the dialog, once started */
  gboolean shot_prepared, layer_opened, network_opened;
  NlEvalShot eval;            /* --explain-run, --activations-run: the evaluation window */
  int settle_frames;
  int exit_status;
};

G_DEFINE_FINAL_TYPE (NlApplication, nl_application, ADW_TYPE_APPLICATION)

void
nl_launch_options_clear (NlLaunchOptions *o)
{
  g_clear_pointer (&o->project, g_free);
  g_clear_pointer (&o->screenshot, g_free);
  g_clear_pointer (&o->page, g_free);
  g_clear_pointer (&o->view, g_free);
  g_clear_pointer (&o->layer, g_free);
  g_clear_pointer (&o->explain_method, g_free);
  g_clear_pointer (&o->network, g_free);
}

char *
nl_application_sample_path (void)
{
  return g_build_filename (g_get_user_data_dir (), "netloom", "sample.netloom", NULL);
}

static void
apply_color_scheme (NlApplication *app)
{
  static const AdwColorScheme schemes[] = { ADW_COLOR_SCHEME_DEFAULT, ADW_COLOR_SCHEME_FORCE_LIGHT,
                                            ADW_COLOR_SCHEME_FORCE_DARK };
  int i = g_settings_get_enum (app->settings, "color-scheme");
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), schemes[CLAMP (i, 0, 2)]);
}

static void
action_about (GSimpleAction *action, GVariant *param, gpointer data)
{
  g_assert (NL_IS_APPLICATION (data));
  const char *developers[] = { _("The netloom developers"), NULL };
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (data));
  GtkWidget *about = adw_about_window_new ();
  g_object_set (about, "transient-for", parent, "application-name", "netloom", "application-icon", NL_APP_ID,
                "developer-name", _("The netloom developers"), "version", PACKAGE_VERSION, "license-type",
                GTK_LICENSE_GPL_3_0, "comments",
                _("Build networks visually, train them on a background engine while watching live plots, and "
                  "compare experiments — all in one project file."),
                "developers", developers, "website", "https://github.com/netloom/netloom", NULL);
  gtk_window_present (GTK_WINDOW (about));
}

static void
action_quit (GSimpleAction *action, GVariant *param, gpointer data)
{
  g_assert (NL_IS_APPLICATION (data));
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (data));
  /* close_request saves the window state */
  while (windows)
    {
      GtkWindow *w = windows->data;
      windows = windows->next;
      gtk_window_close (w);
    }
}

static void
action_color_scheme (GSimpleAction *action, GVariant *param, gpointer data)
{
  NlApplication *app = data;
  g_assert (NL_IS_APPLICATION (app));
  g_assert (g_variant_is_of_type (param, G_VARIANT_TYPE_STRING));
  g_settings_set_string (app->settings, "color-scheme", g_variant_get_string (param, NULL));
  g_simple_action_set_state (action, param);
  apply_color_scheme (app);
}

static void
nl_application_startup (GApplication *gapp)
{
  NlApplication *app = NL_APPLICATION (gapp);
  g_autofree char *scheme = NULL;
  const GActionEntry entries[] = {
    { "about", action_about, NULL, NULL, NULL },
    { "quit", action_quit, NULL, NULL, NULL },
    { "color-scheme", action_color_scheme, "s", "'default'", NULL },
  };
  static const char *quit_accels[] = { "<Control>q", NULL };
  static const char *about_accels[] = { "F1", NULL };
  static const char *help_accels[] = { "<Control>question", NULL };

  G_APPLICATION_CLASS (nl_application_parent_class)->startup (gapp);
  app->settings = nl_settings_get ();
  g_action_map_add_action_entries (G_ACTION_MAP (app), entries, G_N_ELEMENTS (entries), app);
  scheme = g_settings_get_string (app->settings, "color-scheme");
  g_action_change_state (g_action_map_lookup_action (G_ACTION_MAP (app), "color-scheme"),
                         g_variant_new_string (scheme));
  apply_color_scheme (app);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.quit", quit_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.about", about_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.show-help-overlay", help_accels);
}

/* ---- screenshot mode: wait until loaded and idle, draw, save, quit ---- */

static void
screenshot_finish (NlApplication *app, NlWindow *win, const char *failure)
{
  g_autoptr (GError) error = NULL;
  /* --quantize-run shoots the dialog, --explain-run the evaluation window: not the window under them */
  GtkWidget *shot = app->quantize ? GTK_WIDGET (app->quantize)
                    : app->eval.window ? GTK_WIDGET (app->eval.window) : GTK_WIDGET (win);
  g_clear_handle_id (&app->shot_timeout, g_source_remove);
  if (failure)
    {
      fprintf (stderr, "netloom: screenshot: %s\n", failure);
      app->exit_status = 1;
    }
  else if (!nl_widget_save_png (shot, app->opts.screenshot, &error))
    {
      fprintf (stderr, "netloom: screenshot: %s\n", error->message);
      app->exit_status = 1;
    }
  else
    printf ("%s\n", app->opts.screenshot);
  if (app->quantize)
    gtk_window_destroy (GTK_WINDOW (app->quantize));
  g_clear_object (&app->quantize);
  nl_eval_shot_clear (&app->eval);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* --quantize-run: select the run, Quantize…, Start, as a person would.
 * TRUE while the dialog has not finished. */
static gboolean
screenshot_quantize_pending (NlApplication *app, NlWindow *win, const char **failure)
{
  GtkWidget *page = nl_window_get_page (win, "experiments");
  GListModel *toplevels; /* GTK's own */
  if (app->quantize)
    return nl_quantize_dialog_is_running (app->quantize);
  if (nl_experiments_page_is_loading (NL_EXPERIMENTS_PAGE (page)))
    return TRUE;
  nl_window_show_page (win, "experiments");
  nl_experiments_page_select_runs (NL_EXPERIMENTS_PAGE (page), &app->opts.quantize_run, 1);
  /* a disabled action (no such run, no checkpoint) opens nothing */
  gtk_widget_activate_action (page, "exp.quantize", NULL);
  toplevels = gtk_window_get_toplevels ();
  for (guint i = 0; i < g_list_model_get_n_items (toplevels) && !app->quantize; i++)
    {
      g_autoptr (GObject) w = g_list_model_get_item (toplevels, i);
      if (NL_IS_QUANTIZE_DIALOG (w))
        app->quantize = g_object_ref (NL_QUANTIZE_DIALOG (w));
    }
  if (!app->quantize)
    {
      *failure = "cannot quantize that run: no such run, or it has no checkpoint";
      return FALSE;
    }
  nl_quantize_dialog_start (app->quantize);
  return TRUE;
}

/* --run, --view, --layer: what the training page shows in the shot.
 * FALSE while it is not ready yet (the run's points are being read). */
static gboolean
screenshot_prepare (NlApplication *app, NlWindow *win)
{
  NlTrainingDashboard *dash = nl_training_page_get_dashboard (NL_TRAINING_PAGE (nl_window_get_page (win, "training")));
  NlLayersPanel *layers = nl_training_dashboard_get_layers_panel (dash);

  if (!app->shot_prepared)
    {
      app->shot_prepared = TRUE;
      if (app->opts.run > 0)
        nl_training_dashboard_show_run (dash, app->opts.run);
      if (app->opts.view || app->opts.layer)
        nl_training_dashboard_show_view (dash, app->opts.layer ? "layers" : app->opts.view);
      return !app->opts.run && !app->opts.layer;
    }
  if (app->opts.run > 0 && (nl_training_dashboard_get_followed_run (dash) != app->opts.run
                            || nl_training_dashboard_is_reading (dash)))
    return FALSE;
  if (app->opts.layer && !app->layer_opened)
    {
      app->layer_opened = nl_layers_panel_open_layer (layers, app->opts.layer);
      return FALSE;
    }
  return !nl_layers_panel_is_loading (layers);
}

static gboolean
screenshot_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  NlApplication *app = data;
  NlWindow *win = NL_WINDOW (widget);
  NlWorkspace *ws = nl_window_get_workspace (win);
  GtkWidget *page;

  if (nl_window_is_busy (win) || !ws)
    {
      app->settle_frames = 0;
      return G_SOURCE_CONTINUE;
    }
  if (app->opts.network && !app->network_opened)
    {
      /* a template, as New ▸ its name does: the page's network is then named after it */
      NlNetworkPage *page = NL_NETWORK_PAGE (nl_window_get_page (win, "network"));
      app->network_opened = TRUE;
      gtk_widget_activate_action (GTK_WIDGET (page), "editor.new", "s", app->opts.network);
      if (!g_str_has_prefix (nl_network_doc_get_name (nl_network_page_get_document (page)), app->opts.network))
        {
          g_autofree char *why = g_strdup_printf ("--network: no network template '%s'", app->opts.network);
          screenshot_finish (app, win, why);
          return G_SOURCE_REMOVE;
        }
      return G_SOURCE_CONTINUE;
    }
  if (!screenshot_prepare (app, win))
    {
      app->settle_frames = 0;
      return G_SOURCE_CONTINUE;
    }
  if (app->opts.train_for_seconds > 0)
    {
      gint64 now = g_get_monotonic_time ();
      if (!app->train_started)
        {
          page = nl_window_get_page (win, "training");
          app->train_started = now;
          if (!gtk_widget_activate_action (page, "training.start", NULL))
            {
              screenshot_finish (app, win, "the training page cannot start a run");
              return G_SOURCE_REMOVE;
            }
          return G_SOURCE_CONTINUE;
        }
      if (now - app->train_started < app->opts.train_for_seconds * G_USEC_PER_SEC)
        return G_SOURCE_CONTINUE;
    }
  if (app->opts.quantize_run > 0)
    {
      const char *failure = NULL;
      if (screenshot_quantize_pending (app, win, &failure))
        {
          app->settle_frames = 0;
          return G_SOURCE_CONTINUE;
        }
      if (failure)
        {
          screenshot_finish (app, win, failure);
          return G_SOURCE_REMOVE;
        }
    }
  if (app->opts.explain_run > 0 || app->opts.activations_run > 0)
    {
      const char *failure = NULL;
      if (nl_eval_shot_pending (&app->eval, &app->opts, GTK_WINDOW (win), ws, &failure))
        {
          app->settle_frames = 0;
          return G_SOURCE_CONTINUE;
        }
      if (failure)
        {
          screenshot_finish (app, win, failure);
          return G_SOURCE_REMOVE;
        }
    }
  /* a few quiet frames so that late layout and idle work have landed */
  if (++app->settle_frames < 4)
    return G_SOURCE_CONTINUE;
  /* a widget that queued a redraw since the last frame renders nothing
   * until the next one: try again then (for a second at most) */
  if (app->settle_frames < 64)
    {
      g_autoptr (GdkTexture) probe
          = nl_widget_render_texture (app->quantize ? GTK_WIDGET (app->quantize)
                                      : app->eval.window ? GTK_WIDGET (app->eval.window) : GTK_WIDGET (win), NULL);
      if (!probe)
        return G_SOURCE_CONTINUE;
    }
  screenshot_finish (app, win, NULL);
  return G_SOURCE_REMOVE;
}

static gboolean
screenshot_timeout (gpointer data)
{
  NlApplication *app = data;
  GtkWindow *win = gtk_application_get_active_window (GTK_APPLICATION (app));
  app->shot_timeout = 0;
  if (win)
    screenshot_finish (app, NL_WINDOW (win), "timed out waiting for the project to load");
  return G_SOURCE_REMOVE;
}

static void
screenshot_open_failed (NlWindow *win, const char *path, const char *message, NlApplication *app)
{
  g_autofree char *why = g_strdup_printf ("cannot open %s: %s", path, message);
  screenshot_finish (app, win, why);
}

static NlWindow *
ensure_window (NlApplication *app)
{
  GtkWindow *active = gtk_application_get_active_window (GTK_APPLICATION (app));
  NlWindow *win;
  if (active)
    return NL_WINDOW (active);
  win = nl_window_new (GTK_APPLICATION (app));
  if (app->opts.width > 0 && app->opts.height > 0)
    {
      gtk_window_unmaximize (GTK_WINDOW (win));
      gtk_window_set_default_size (GTK_WINDOW (win), app->opts.width, app->opts.height);
    }
  if (app->opts.page)
    nl_window_show_page (win, app->opts.page);
  if (app->opts.screenshot)
    {
      gtk_widget_add_tick_callback (GTK_WIDGET (win), screenshot_tick, app, NULL);
      g_signal_connect (win, "open-failed", G_CALLBACK (screenshot_open_failed), app);
      app->shot_timeout = g_timeout_add_seconds (SCREENSHOT_TIMEOUT_S, screenshot_timeout, app);
    }
  return win;
}

static void
open_default_project (NlApplication *app, NlWindow *win)
{
  g_autofree char *last = g_settings_get_string (app->settings, "last-project");
  if (app->opts.project && app->opts.screenshot)
    nl_window_open_project (win, app->opts.project, NL_OPEN_EXISTING);
  else if (last[0] && g_file_test (last, G_FILE_TEST_IS_REGULAR))
    nl_window_open_project (win, last, NL_OPEN_EXISTING);
  else
    {
      /* first start: a working network at once */
      g_autofree char *sample = nl_application_sample_path ();
      nl_window_open_project (win, sample, NL_OPEN_SAMPLE);
    }
}

static void
nl_application_activate (GApplication *gapp)
{
  NlApplication *app = NL_APPLICATION (gapp);
  gboolean fresh = gtk_application_get_active_window (GTK_APPLICATION (app)) == NULL;
  NlWindow *win = ensure_window (app);
  if (fresh)
    open_default_project (app, win);
  gtk_window_present (GTK_WINDOW (win));
}

static void
nl_application_open (GApplication *gapp, GFile **files, int n_files, const char *hint)
{
  NlApplication *app = NL_APPLICATION (gapp);
  NlWindow *win = ensure_window (app);
  g_autofree char *path = g_file_get_path (files[0]);
  if (path)
    nl_window_open_project (win, path, NL_OPEN_EXISTING);
  gtk_window_present (GTK_WINDOW (win));
}

static void
nl_application_finalize (GObject *object)
{
  NlApplication *app = NL_APPLICATION (object);
  nl_launch_options_clear (&app->opts);
  g_clear_object (&app->settings);
  G_OBJECT_CLASS (nl_application_parent_class)->finalize (object);
}

/* Windows are gone; runs their projects' closing stopped may still be
 * finishing a batch. */
static void
nl_application_shutdown (GApplication *gapp)
{
  nl_training_page_end_abandoned ();
  G_APPLICATION_CLASS (nl_application_parent_class)->shutdown (gapp);
}

static void
nl_application_class_init (NlApplicationClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = nl_application_finalize;
  G_APPLICATION_CLASS (klass)->startup = nl_application_startup;
  G_APPLICATION_CLASS (klass)->shutdown = nl_application_shutdown;
  G_APPLICATION_CLASS (klass)->activate = nl_application_activate;
  G_APPLICATION_CLASS (klass)->open = nl_application_open;
}

static void
nl_application_init (NlApplication *app)
{
}

NlApplication *
nl_application_new (const NlLaunchOptions *opts)
{
  GApplicationFlags flags = G_APPLICATION_HANDLES_OPEN;
  NlApplication *app;
  /* a screenshot is its own process, never handed to a running instance */
  if (opts && opts->screenshot)
    flags |= G_APPLICATION_NON_UNIQUE;
  app = g_object_new (NL_TYPE_APPLICATION, "application-id", NL_APP_ID, "flags", flags, "resource-base-path",
                      "/io/github/netloom/Netloom", NULL);
  if (opts)
    {
      app->opts = *opts;
      app->opts.project = g_strdup (opts->project);
      app->opts.screenshot = g_strdup (opts->screenshot);
      app->opts.page = g_strdup (opts->page);
      app->opts.view = g_strdup (opts->view);
      app->opts.layer = g_strdup (opts->layer);
      app->opts.explain_method = g_strdup (opts->explain_method);
      app->opts.network = g_strdup (opts->network);
    }
  return app;
}

int
nl_application_get_exit_status (NlApplication *app)
{
  return app->exit_status;
}

void
nl_application_init_i18n (const char *localedir)
{
  const char *dir = g_getenv ("NETLOOM_LOCALEDIR");

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, dir && *dir ? dir : localedir);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  /* the templates (GtkBuilder) translate through the default domain */
  textdomain (GETTEXT_PACKAGE);
}
