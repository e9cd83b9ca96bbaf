/* nl-workspace.c — the open project, its change signal and page requests. */
#include "ui/nl-workspace.h"

#include <string.h>

struct _NlWorkspace {
  GObject parent_instance;
  NlProject *project;
  guint watch_id;
  gint64 data_version;
  int busy;
};

enum { PROP_0, PROP_BUSY, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (NlWorkspace, nl_workspace, G_TYPE_OBJECT)

enum { CHANGED, OPEN_NETWORK, FORK_RUN, EVALUATE_RUN, SHOW_PAGE, TOAST, RUN_SWEEP, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
nl_workspace_dispose (GObject *object)
{
  NlWorkspace *ws = NL_WORKSPACE (object);
  g_clear_handle_id (&ws->watch_id, g_source_remove);
  G_OBJECT_CLASS (nl_workspace_parent_class)->dispose (object);
}

static void
nl_workspace_finalize (GObject *object)
{
  NlWorkspace *ws = NL_WORKSPACE (object);
  g_clear_pointer (&ws->project, nl_project_close);
  G_OBJECT_CLASS (nl_workspace_parent_class)->finalize (object);
}

static void
nl_workspace_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  NlWorkspace *ws = NL_WORKSPACE (object);
  switch (prop_id)
    {
    case PROP_BUSY:
      g_value_set_boolean (value, ws->busy > 0);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
nl_workspace_class_init (NlWorkspaceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = nl_workspace_dispose;
  object_class->finalize = nl_workspace_finalize;
  object_class->get_property = nl_workspace_get_property;

  props[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);

  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                   G_TYPE_NONE, 1, G_TYPE_UINT);
  signals[OPEN_NETWORK] = g_signal_new ("open-network", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                        NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_INT);
  signals[FORK_RUN] = g_signal_new ("fork-run", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                    G_TYPE_NONE, 1, G_TYPE_INT64);
  signals[EVALUATE_RUN] = g_signal_new ("evaluate-run", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                        NULL, G_TYPE_NONE, 1, G_TYPE_INT64);
  signals[SHOW_PAGE] = g_signal_new ("show-page", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                     G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[RUN_SWEEP] = g_signal_new ("run-sweep", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                     NULL, G_TYPE_NONE, 1, G_TYPE_INT64);
  signals[TOAST] = g_signal_new ("toast", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                 G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
nl_workspace_init (NlWorkspace *ws)
{
}

NlWorkspace *
nl_workspace_new (NlProject *project)
{
  NlWorkspace *ws;
  g_return_val_if_fail (project != NULL, NULL);
  ws = g_object_new (NL_TYPE_WORKSPACE, NULL);
  ws->project = project;
  ws->data_version = nl_project_data_version (project);
  return ws;
}

NlProject *
nl_workspace_get_project (NlWorkspace *ws)
{
  g_return_val_if_fail (NL_IS_WORKSPACE (ws), NULL);
  return ws->project;
}

const char *
nl_workspace_get_path (NlWorkspace *ws)
{
  g_return_val_if_fail (NL_IS_WORKSPACE (ws), NULL);
  return nl_project_path (ws->project);
}

char *
nl_workspace_dup_title (NlWorkspace *ws)
{
  g_autofree char *base = g_path_get_basename (nl_workspace_get_path (ws));
  char *dot = strrchr (base, '.');
  if (dot && dot != base)
    *dot = '\0';
  return g_steal_pointer (&base);
}

void
nl_workspace_notify (NlWorkspace *ws, NlWorkspaceChange what)
{
  g_return_if_fail (NL_IS_WORKSPACE (ws));
  g_signal_emit (ws, signals[CHANGED], 0, (guint) what);
}

static gboolean
poll_changes (gpointer data)
{
  NlWorkspace *ws = data;
  gint64 v = nl_project_data_version (ws->project);
  if (v != ws->data_version)
    {
      ws->data_version = v;
      nl_workspace_notify (ws, NL_WORKSPACE_ALL);
    }
  return G_SOURCE_CONTINUE;
}

void
nl_workspace_watch (NlWorkspace *ws, guint interval_ms)
{
  g_return_if_fail (NL_IS_WORKSPACE (ws));
  g_clear_handle_id (&ws->watch_id, g_source_remove);
  if (interval_ms > 0)
    ws->watch_id = g_timeout_add (interval_ms, poll_changes, ws);
}

void
nl_workspace_busy_push (NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_WORKSPACE (ws));
  if (ws->busy++ == 0)
    g_object_notify_by_pspec (G_OBJECT (ws), props[PROP_BUSY]);
}

void
nl_workspace_busy_pop (NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_WORKSPACE (ws));
  g_return_if_fail (ws->busy > 0);
  if (--ws->busy == 0)
    g_object_notify_by_pspec (G_OBJECT (ws), props[PROP_BUSY]);
}

gboolean
nl_workspace_is_busy (NlWorkspace *ws)
{
  g_return_val_if_fail (NL_IS_WORKSPACE (ws), FALSE);
  return ws->busy > 0;
}

void
nl_workspace_request_open_network (NlWorkspace *ws, const char *name, int version)
{
  g_signal_emit (ws, signals[OPEN_NETWORK], 0, name, version);
}

void
nl_workspace_request_fork_run (NlWorkspace *ws, gint64 run)
{
  g_signal_emit (ws, signals[FORK_RUN], 0, run);
}

void
nl_workspace_request_evaluate_run (NlWorkspace *ws, gint64 run)
{
  g_signal_emit (ws, signals[EVALUATE_RUN], 0, run);
}

void
nl_workspace_request_run_sweep (NlWorkspace *ws, gint64 sweep)
{
  g_signal_emit (ws, signals[RUN_SWEEP], 0, sweep);
}

void
nl_workspace_request_page (NlWorkspace *ws, const char *page)
{
  g_signal_emit (ws, signals[SHOW_PAGE], 0, page);
}

void
nl_workspace_toast (NlWorkspace *ws, const char *fmt, ...)
{
  va_list args;
  g_autofree char *msg = NULL;
  va_start (args, fmt);
  msg = g_strdup_vprintf (fmt, args);
  va_end (args);
  g_signal_emit (ws, signals[TOAST], 0, msg);
}
