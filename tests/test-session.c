/* test-session.c — NlSession: a stored run on a worker thread whose events
 * a GMainLoop drains (through the wakeup, as the GUI does): the event
 * sequence, pause / resume / stop between batches with the run's status in
 * the project, errors as one ERROR + FINISHED failed with the project left
 * intact, early stopping, BATCH coalescing, resume and fork. Every run
 * trains a tiny network on a generated 20x20 dataset in milliseconds. */
#include <math.h>
#include <string.h>

#include "engine/session/nl-run-checkpoint.h"
#include "engine/session/nl-session.h"
#include "nl-test-util.h"

static char *data_dir;

static void
write_idx (const char *name, gboolean images, int n, int side, guint32 seed)
{
  g_autofree char *path = g_build_filename (data_dir, name, NULL);
  g_autoptr (GString) s = g_string_new (NULL);
  g_autoptr (GRand) r = g_rand_new_with_seed (seed);
  guint8 head[16] = { 0, 0, 8, images ? 3 : 1 };
  guint32 dims[3] = { GUINT32_TO_BE (n), GUINT32_TO_BE (side), GUINT32_TO_BE (side) };
  memcpy (head + 4, dims, images ? 12 : 4);
  g_string_append_len (s, (char *) head, images ? 16 : 8);
  for (int i = 0; i < n; i++)
    {
      int label = (i * 7 + 3) % 10;
      /* class c: a bright pair of rows at 2c, plus noise */
      for (int px = 0; images && px < side * side; px++)
        g_string_append_c (s, (char) MIN (g_rand_int_range (r, 0, 90) + (px / side / 2 == label ? 150 : 0), 255));
      if (!images)
        g_string_append_c (s, (char) label);
    }
  g_assert_true (g_file_set_contents (path, s->str, s->len, NULL));
}

static const char *net_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"tiny\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},{\"id\":\"flat\",\"op\":\"Flatten\"},"
  "{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":16}},"
  "{\"id\":\"act\",\"op\":\"Activation\"},{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
  "\"edges\":[\"data -> flat\",\"flat -> fc1\",\"fc1 -> act\",\"act -> fc2\"]}";

/* 600 training samples in batches of 32: 19 batches an epoch */
#define N_BATCHES 19
/* long enough (about a second) that a pause or stop requested on the first
 * BATCH event is honoured well before the end, even on a busy machine */
#define LONG_EPOCHS 25

static void
config (NlRunConfig *cfg, int epochs, float lr, char **spec)
{
  *spec = g_strdup_printf ("mnist:%s", data_dir);
  nl_run_config_init (cfg);
  nl_optim_config_init (&cfg->optim, NL_OPTIM_SGD);
  cfg->optim.lr = lr;
  nl_run_config_set_text (&cfg->dataset, *spec);
  cfg->epochs = epochs;
  cfg->batch_size = 32;
  cfg->eval_batch_size = 100;
  cfg->threads = 1;
  cfg->workers = 0;
  cfg->seed = 3;
}

/* ---- a project per test, and a main loop that watches a session ---- */

typedef struct Watch Watch;
typedef void (*Hook) (Watch *w, const NlSessionEvent *e);

struct Watch {
  char *dir, *path;
  NlProject *p;
  NlSession *s;
  GArray *events;       /* NlSessionEvent copies */
  GMainLoop *loop;
  Hook hook;
  guint wakeups, paused_at;     /* paused_at: events->len when STATUS paused arrived */
  gboolean pause_checked, acted;
  NlSessionEventKind stop_on;   /* stop_hook: stop at the first event of this kind */
  gint64 run;
};

static void
clear_event (gpointer e)
{
  g_free (((NlSessionEvent *) e)->message);
}

static void
watch_init (Watch *w)
{
  g_autoptr (GError) error = NULL;
  memset (w, 0, sizeof *w);
  w->dir = g_dir_make_tmp ("netloom-session-XXXXXX", NULL);
  w->path = g_build_filename (w->dir, "p.netloom", NULL);
  w->p = nl_project_open (w->path, TRUE, &error);
  g_assert_no_error (error);
  w->events = g_array_new (FALSE, TRUE, sizeof (NlSessionEvent));
  g_array_set_clear_func (w->events, clear_event);
  w->loop = g_main_loop_new (NULL, FALSE);
}

static void
watch_clear (Watch *w)
{
  g_clear_pointer (&w->s, nl_session_free);
  g_clear_pointer (&w->p, nl_project_close);
  g_array_unref (w->events);
  g_main_loop_unref (w->loop);
  nl_test_remove_tree (w->dir);
  g_free (w->path);
  g_free (w->dir);
}

static void
on_event (NlSession *s, const NlSessionEvent *e, gpointer user)
{
  Watch *w = user;
  NlSessionEvent copy = *e;
  g_assert_true (s == w->s);
  copy.message = g_strdup (e->message);
  g_array_append_val (w->events, copy);
  if (w->hook)
    w->hook (w, e);
  if (e->kind == NL_SESSION_EVENT_FINISHED)
    g_main_loop_quit (w->loop);
}

static gboolean
on_wakeup (gpointer data)
{
  Watch *w = data;
  w->wakeups++;
  nl_session_drain (w->s, on_event, w);
  return G_SOURCE_REMOVE;
}

static gboolean
on_timeout (gpointer data)
{
  g_error ("the session did not finish in time");
  return G_SOURCE_REMOVE;
}

/* Starts w->s and runs the main loop until a hook or FINISHED quits it. */
static void
watch_loop (Watch *w)
{
  g_autoptr (GError) error = NULL;
  guint timeout = g_timeout_add_seconds (300, on_timeout, NULL);
  g_assert_cmpint (nl_session_get_state (w->s), ==, NL_SESSION_IDLE);
  g_assert_cmpint (nl_session_get_run (w->s), ==, 0);
  nl_session_set_wakeup (w->s, NULL, on_wakeup, w);
  g_assert_true (nl_session_start (w->s, &error));
  g_assert_no_error (error);
  g_main_loop_run (w->loop);
  g_source_remove (timeout);
}

static void
watch_run (Watch *w)
{
  watch_loop (w);
  nl_session_wait (w->s);
  g_assert_cmpint (nl_session_get_state (w->s), ==, NL_SESSION_DONE);
  g_assert_cmpint (nl_session_drain (w->s, NULL, NULL), ==, 0);
}

static const NlSessionEvent *
ev (Watch *w, guint i)
{
  return &g_array_index (w->events, NlSessionEvent, i);
}

static guint
count (Watch *w, NlSessionEventKind kind)
{
  guint n = 0;
  for (guint i = 0; i < w->events->len; i++)
    n += ev (w, i)->kind == kind;
  return n;
}

static const NlSessionEvent *
last_event (Watch *w)
{
  g_assert_cmpuint (w->events->len, >, 0);
  return ev (w, w->events->len - 1);
}

static NlRunInfo *
run_info (Watch *w, gint64 run)
{
  g_autoptr (GError) error = NULL;
  NlRunInfo *info = nl_project_get_run (w->p, run, &error);
  g_assert_no_error (error);
  return info;
}

/* The session ended with STATUS (FINISHED last, the outcome, the run's
 * status in the project); returns the run. */
static NlRunInfo *
ended (Watch *w, const char *status)
{
  NlRunInfo *info = run_info (w, nl_session_get_run (w->s));
  g_assert_cmpint (last_event (w)->kind, ==, NL_SESSION_EVENT_FINISHED);
  g_assert_cmpstr (last_event (w)->status, ==, status);
  g_assert_cmpstr (nl_session_get_outcome (w->s), ==, status);
  g_assert_cmpstr (info->status, ==, status);
  return info;
}

static NlSession *
new_train (Watch *w, const NlRunConfig *cfg)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, &error);
  NlSession *s;
  g_assert_no_error (error);
  s = nl_session_new_train (w->p, "session test", net, cfg, &error);
  g_assert_no_error (error);
  g_assert_nonnull (s);
  return s;
}

/* (epoch, batch) strictly increasing, every epoch's last batch delivered
 * before that epoch's EPOCH event, one EPOCH per epoch in order. */
static void
assert_batches_in_order (Watch *w, int epochs)
{
  int last_epoch = 0, epochs_seen = 0;
  int64_t last_batch = 0;
  gboolean saw_last = FALSE;
  for (guint i = 0; i < w->events->len; i++)
    {
      const NlSessionEvent *e = ev (w, i);
      if (e->kind == NL_SESSION_EVENT_BATCH)
        {
          g_assert_true (e->epoch > last_epoch || (e->epoch == last_epoch && e->batch > last_batch));
          g_assert_cmpint (e->epoch, ==, epochs_seen + 1);
          g_assert_cmpint (e->batch, >=, 1);
          g_assert_cmpint (e->batch, <=, e->n_batches);
          g_assert_true (isfinite (e->loss) && e->loss > 0);
          g_assert_cmpfloat (e->images_per_s, >=, 0);
          last_epoch = e->epoch;
          last_batch = e->batch;
          saw_last = e->batch == e->n_batches;
        }
      else if (e->kind == NL_SESSION_EVENT_EPOCH)
        {
          g_assert_cmpint (e->epoch, ==, ++epochs_seen);
          g_assert_cmpint (e->report.epoch, ==, e->epoch);
          g_assert_true (saw_last);
          g_assert_cmpint (last_epoch, ==, e->epoch);
          g_assert_cmpfloat (e->report.seconds, >, 0);
          g_assert_cmpfloat (e->report.images_per_s, >, 0);
          saw_last = FALSE;
        }
    }
  g_assert_cmpint (epochs_seen, ==, epochs);
}

/* ---- tests ---- */

static void
test_train (void)
{
  Watch w;
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  gint64 run;
  g_autoptr (NlRunInfo) info = NULL;
  g_autoptr (GArray) loss = NULL, batch_loss = NULL, ckpts = NULL;
  g_autoptr (GError) error = NULL;

  watch_init (&w);
  config (&cfg, 3, 0.1f, &spec);
  w.s = new_train (&w, &cfg);
  nl_session_free (g_steal_pointer (&w.s));   /* never started: nothing to join */
  w.s = new_train (&w, &cfg);
  memset (spec, 'x', strlen (spec));   /* the session keeps its own copies of every string */
  watch_run (&w);

  /* STARTED first with the run id, FINISHED last */
  g_assert_cmpint (ev (&w, 0)->kind, ==, NL_SESSION_EVENT_STARTED);
  run = ev (&w, 0)->run;
  g_assert_cmpint (run, >, 0);
  g_assert_cmpint (nl_session_get_run (w.s), ==, run);
  for (guint i = 0; i < w.events->len; i++)
    g_assert_cmpint (ev (&w, i)->run, ==, run);
  info = ended (&w, "finished");
  g_assert_null (last_event (&w)->message);
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_STARTED) + count (&w, NL_SESSION_EVENT_FINISHED), ==, 2);
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_ERROR) + count (&w, NL_SESSION_EVENT_LOG), ==, 0);
  assert_batches_in_order (&w, 3);
  /* a CHECKPOINT after each EPOCH */
  for (guint i = 0; i < w.events->len; i++)
    if (ev (&w, i)->kind == NL_SESSION_EVENT_CHECKPOINT)
      {
        g_assert_cmpint (ev (&w, i - 1)->kind, ==, NL_SESSION_EVENT_EPOCH);
        g_assert_cmpint (ev (&w, i)->epoch, ==, ev (&w, i - 1)->epoch);
        g_assert_cmpint (ev (&w, i)->checkpoint, >, 0);
      }
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_CHECKPOINT), ==, 3);
  g_assert_cmpfloat (ev (&w, w.events->len - 3)->report.test_acc, >, 0.5); /* it learned: last EPOCH */
  g_assert_cmpint (ev (&w, w.events->len - 3)->kind, ==, NL_SESSION_EVENT_EPOCH);
  g_assert_null (nl_session_get_error (w.s));
  g_assert_false (nl_session_start (w.s, &error));   /* once only */
  g_assert_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG);
  g_clear_error (&error);
  g_assert_cmpuint (w.wakeups, >=, 1);

  /* the project has it all */
  g_assert_cmpstr (info->name, ==, "session test");
  g_assert_null (info->error);
  g_assert_cmpint (info->epochs_done, ==, 3);
  loss = nl_project_get_metrics (w.p, run, "loss", 0, NULL, NULL);
  g_assert_cmpuint (loss->len, ==, 3);
  batch_loss = nl_project_get_metrics (w.p, run, "batch_loss", 0, NULL, NULL);
  g_assert_cmpuint (batch_loss->len, ==, 3 * N_BATCHES);   /* every batch stored, coalesced or not */
  ckpts = nl_project_list_checkpoints (w.p, run, NULL);
  g_assert_cmpuint (ckpts->len, >=, 1);
  g_assert_cmpint (g_array_index (ckpts, NlCheckpointInfo, ckpts->len - 1).epoch, ==, 3);
  g_assert_true (nl_project_check (w.p, &error));
  g_assert_no_error (error);
  watch_clear (&w);
}

/* pause on the first batch; when STATUS paused arrives the project says
 * paused and nothing comes for 250 ms; then resume and finish */
static gboolean
pause_check (gpointer data)
{
  Watch *w = data;
  g_autoptr (NlRunInfo) info = run_info (w, nl_session_get_run (w->s));
  nl_session_drain (w->s, on_event, w);
  g_assert_cmpuint (w->events->len, ==, w->paused_at);   /* no BATCH, nothing at all */
  g_assert_cmpint (nl_session_get_state (w->s), ==, NL_SESSION_PAUSED);
  g_assert_cmpstr (info->status, ==, "paused");
  w->pause_checked = TRUE;
  nl_session_resume (w->s);
  return G_SOURCE_REMOVE;
}

static void
pause_hook (Watch *w, const NlSessionEvent *e)
{
  if (e->kind == NL_SESSION_EVENT_BATCH && !w->acted)
    {
      w->acted = TRUE;
      nl_session_pause (w->s);
      g_assert_cmpint (nl_session_get_state (w->s), ==, NL_SESSION_PAUSED);
    }
  else if (e->kind == NL_SESSION_EVENT_STATUS && !strcmp (e->status, "paused"))
    {
      g_autoptr (NlRunInfo) info = run_info (w, e->run);
      g_assert_cmpstr (info->status, ==, "paused");
      w->paused_at = w->events->len;
      g_timeout_add (250, pause_check, w);
    }
  else if (e->kind == NL_SESSION_EVENT_STATUS)
    {
      /* resumed: after the check, and the project says so */
      g_autoptr (NlRunInfo) info = run_info (w, e->run);
      g_assert_true (w->pause_checked && !strcmp (e->status, "running") && !strcmp (info->status, "running"));
    }
}

static void
test_pause (void)
{
  Watch w;
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (NlRunInfo) info = NULL;

  watch_init (&w);
  config (&cfg, LONG_EPOCHS, 0.1f, &spec);
  w.s = new_train (&w, &cfg);
  w.hook = pause_hook;
  watch_run (&w);
  g_assert_true (w.pause_checked);
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_STATUS), ==, 2);
  assert_batches_in_order (&w, LONG_EPOCHS);
  info = ended (&w, "finished");
  g_assert_cmpint (info->epochs_done, ==, LONG_EPOCHS);
  watch_clear (&w);
}

static void
stop_hook (Watch *w, const NlSessionEvent *e)
{
  if (e->kind == w->stop_on && !w->acted)
    {
      w->acted = TRUE;
      nl_session_stop (w->s);
    }
}

static void
pause_then_stop_hook (Watch *w, const NlSessionEvent *e)
{
  if (e->kind == NL_SESSION_EVENT_BATCH && !w->acted)
    {
      w->acted = TRUE;
      nl_session_pause (w->s);
    }
  else if (e->kind == NL_SESSION_EVENT_STATUS)
    {
      g_assert_cmpstr (e->status, ==, "paused");
      nl_session_stop (w->s);
    }
}

/* stopped on the first BATCH, or once paused */
static void
check_stopped (Hook hook)
{
  Watch w;
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (NlRunInfo) info = NULL;
  g_autoptr (GError) error = NULL;

  watch_init (&w);
  config (&cfg, LONG_EPOCHS, 0.1f, &spec);
  w.s = new_train (&w, &cfg);
  w.hook = hook;
  w.stop_on = NL_SESSION_EVENT_BATCH;
  watch_run (&w);
  info = ended (&w, "stopped");
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_ERROR), ==, 0);
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_EPOCH), <, LONG_EPOCHS);
  g_assert_error (nl_session_get_error (w.s), NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED);
  g_assert_cmpint (info->epochs_done, <, LONG_EPOCHS);
  g_assert_true (nl_project_check (w.p, &error));
  /* stopping or pausing a finished session does nothing */
  nl_session_stop (w.s);
  nl_session_pause (w.s);
  g_assert_cmpint (nl_session_get_state (w.s), ==, NL_SESSION_DONE);
  watch_clear (&w);
}

static void
test_stop (void)
{
  check_stopped (stop_hook);
}

static void
test_stop_paused (void)
{
  check_stopped (pause_then_stop_hook);
}

/* An error ends the session with one ERROR, FINISHED failed with the same
 * message, the run failed with it, and the project intact and openable. */
static void
check_failed (const NlRunConfig *cfg, const char *needle)
{
  Watch w;
  g_autoptr (NlRunInfo) info = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) again = NULL;
  g_autoptr (GPtrArray) runs = NULL;
  const char *message;

  watch_init (&w);
  w.s = new_train (&w, cfg);
  watch_run (&w);
  g_assert_cmpint (ev (&w, 0)->kind, ==, NL_SESSION_EVENT_STARTED);
  g_assert_cmpint (ev (&w, 0)->run, >, 0);
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_ERROR), ==, 1);
  g_assert_cmpint (ev (&w, w.events->len - 2)->kind, ==, NL_SESSION_EVENT_ERROR);
  message = ev (&w, w.events->len - 2)->message;
  g_test_message ("%s", message);
  g_assert_nonnull (strstr (message, needle));
  info = ended (&w, "failed");
  g_assert_cmpstr (last_event (&w)->message, ==, message);
  g_assert_nonnull (nl_session_get_error (w.s));
  g_assert_cmpstr (nl_session_get_error (w.s)->message, ==, message);
  g_assert_cmpstr (info->error, ==, message);
  g_assert_true (nl_project_check (w.p, &error));
  g_assert_no_error (error);
  again = nl_project_open (w.path, FALSE, &error);
  g_assert_no_error (error);
  runs = nl_project_list_runs (again, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, 1);
  watch_clear (&w);
}

static void
test_error_diverges (void)
{
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  config (&cfg, 3, 1e30f, &spec);
  /* the replayed step names the node (nl-layer-stats.h) */
  check_failed (&cfg, "made the first");
}

static void
test_error_dataset (void)
{
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  config (&cfg, 3, 0.1f, &spec);
  nl_run_config_set_text (&cfg.dataset, "mnist:/nonexistent-netloom-dir");
  check_failed (&cfg, "/nonexistent-netloom-dir");
}

/* lr 1e-30 (no update a float can hold): the test accuracy cannot change,
 * so patience 1 stops at epoch 2;
 * restore_best adds the best weights as the newest checkpoint */
static void
test_early_stop (void)
{
  Watch w;
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (NlRunInfo) info = NULL;
  g_autoptr (GArray) ckpts = NULL;
  const char *message;

  watch_init (&w);
  config (&cfg, 8, 1e-30f, &spec);
  nl_run_config_set_text (&cfg.early_stop_metric, "test_accuracy");
  cfg.patience = 1;
  cfg.restore_best = TRUE;
  w.s = new_train (&w, &cfg);
  watch_run (&w);
  info = ended (&w, "finished");
  message = last_event (&w)->message;
  g_test_message ("%s", message);
  g_assert_true (g_str_has_prefix (message, "early stopping at epoch 2 (best test_accuracy "));
  g_assert_true (g_str_has_suffix (message, " at epoch 1)"));
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_LOG), ==, 1);   /* then the restored CHECKPOINT */
  g_assert_cmpint (last_event (&w)[-2].kind, ==, NL_SESSION_EVENT_LOG);
  g_assert_cmpstr (last_event (&w)[-2].message, ==, message);
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_EPOCH), ==, 2);
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_CHECKPOINT), ==, 3);   /* epochs 1, 2 and the restored best */
  g_assert_null (nl_session_get_error (w.s));
  g_assert_cmpstr (info->error, ==, message);
  g_assert_cmpint (info->epochs_done, ==, 2);
  ckpts = nl_project_list_checkpoints (w.p, info->id, NULL);
  g_assert_cmpint (g_array_index (ckpts, NlCheckpointInfo, ckpts->len - 1).epoch, ==, 2);
  watch_clear (&w);
}

/* a loss (lower is better) that must drop by more than 100 never improves
 * after epoch 1: patience 2 stops at epoch 3 of a run that learns */
static void
test_early_stop_min_delta (void)
{
  Watch w;
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (NlRunInfo) info = NULL;

  watch_init (&w);
  config (&cfg, 6, 0.1f, &spec);
  nl_run_config_set_text (&cfg.early_stop_metric, "train_loss");
  cfg.patience = 2;
  cfg.min_delta = 100;
  w.s = new_train (&w, &cfg);
  watch_run (&w);
  info = ended (&w, "finished");
  g_assert_true (g_str_has_prefix (last_event (&w)->message, "early stopping at epoch 3 (best train_loss "));
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_EPOCH), ==, 3);
  g_assert_cmpint (info->epochs_done, ==, 3);
  watch_clear (&w);
}

static void
test_bad_options (void)
{
  Watch w;
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, NULL);
  enum { N_BAD = 6 };
  g_autoptr (GPtrArray) runs = NULL;

  watch_init (&w);
  config (&cfg, 1, 0.1f, &spec);
  for (int i = 0; i < N_BAD; i++)
    {
      g_autoptr (GError) error = NULL;
      g_auto (NlRunConfig) bad = { 0 };
      nl_run_config_copy (&bad, &cfg);
      switch (i)
        {
        case 0: nl_run_config_set_text (&bad.early_stop_metric, "val_loss"); break;
        case 1: bad.patience = -1; break;
        case 2: bad.min_delta = NAN; break;
        case 3: bad.min_delta = -0.1; break;
        case 4: nl_run_config_set_text (&bad.monitor, "accuracy"); break;
        default: bad.keep_last = -1; break;
        }
      g_assert_null (nl_session_new_train (w.p, NULL, net, &bad, &error));
      g_assert_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG);
      g_test_message ("%s", error->message);
    }
  runs = nl_project_list_runs (w.p, NULL);
  g_assert_cmpuint (runs->len, ==, 0);
  watch_clear (&w);
}

/* batches of one: thousands of batches, a few BATCH events a frame */
static void
test_coalescing (void)
{
  Watch w;
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  gint64 t0;
  double secs;
  guint n, batches;
  g_autoptr (GArray) batch_loss = NULL;

  watch_init (&w);
  config (&cfg, 3, 0.01f, &spec);
  cfg.batch_size = 1;
  w.s = new_train (&w, &cfg);
  t0 = g_get_monotonic_time ();
  watch_run (&w);
  secs = (g_get_monotonic_time () - t0) / 1e6;
  n = count (&w, NL_SESSION_EVENT_BATCH);
  batch_loss = nl_project_get_metrics (w.p, nl_session_get_run (w.s), "batch_loss", 0, NULL, NULL);
  batches = batch_loss->len;
  g_test_message ("%u batches in %.2f s: %u BATCH events", batches, secs, n);
  g_assert_cmpuint (batches, ==, 3 * 600);
  /* 60 a second at most, plus the last of each epoch (and one pending each);
   * the bound follows the time taken, so a slow machine cannot fail it */
  g_assert_cmpfloat (n, <=, 60 * secs + 3 * 2 + 2);
  assert_batches_in_order (&w, 3);   /* checks each epoch's last batch came */
  g_assert_cmpint (last_event (&w)[-3].n_batches, ==, 600);   /* BATCH, EPOCH, CHECKPOINT, FINISHED */
  watch_clear (&w);
}

/* the wakeup is scheduled once until the next drain, however many events */
static gboolean
count_wakeup (gpointer data)
{
  (*(guint *) data)++;
  return G_SOURCE_CONTINUE;   /* ignored: the wakeup runs once */
}

static void
test_wakeup_once (void)
{
  Watch w;
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (GError) error = NULL;
  guint calls = 0, n;

  watch_init (&w);
  config (&cfg, 2, 0.1f, &spec);
  w.s = new_train (&w, &cfg);
  nl_session_set_wakeup (w.s, g_main_context_default (), count_wakeup, &calls);
  g_assert_true (nl_session_start (w.s, &error));
  nl_session_wait (w.s);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_cmpuint (calls, ==, 1);
  n = nl_session_drain (w.s, on_event, &w);
  g_assert_cmpuint (n, ==, w.events->len);
  g_assert_cmpuint (n, >, 8);   /* STARTED, BATCH.., EPOCH, CHECKPOINT x2, FINISHED */
  g_assert_cmpint (last_event (&w)->kind, ==, NL_SESSION_EVENT_FINISHED);
  g_assert_false (g_main_context_pending (NULL));
  g_assert_cmpuint (calls, ==, 1);
  watch_clear (&w);
}

/* freeing the session from its own event callback stops the run; the
 * session goes once the drain returns, and nothing more is delivered */
static void
free_hook (Watch *w, const NlSessionEvent *e)
{
  if (e->kind == NL_SESSION_EVENT_STARTED)
    w->run = e->run;   /* kept: the session will be gone */
  if (e->kind == NL_SESSION_EVENT_EPOCH)
    {
      g_assert_false (w->acted);
      w->acted = TRUE;
      nl_session_free (g_steal_pointer (&w->s));
      g_main_loop_quit (w->loop);
    }
}

static void
test_free_in_callback (void)
{
  Watch w;
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (NlRunInfo) info = NULL;

  watch_init (&w);
  config (&cfg, LONG_EPOCHS, 0.1f, &spec);
  w.s = new_train (&w, &cfg);
  w.hook = free_hook;
  watch_loop (&w);
  g_assert_null (w.s);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_cmpint (last_event (&w)->kind, ==, NL_SESSION_EVENT_EPOCH);
  /* freed = stopped, waited for: the run's end is stored */
  info = run_info (&w, w.run);
  g_assert_cmpstr (info->status, ==, "stopped");
  watch_clear (&w);
}

static void
test_resume_fork (void)
{
  Watch w;
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (NlRunInfo) parent = NULL, child = NULL;
  gint64 run, forked;
  g_auto (NlRunConfig) rc = { 0 };
  const char *bad[] = { "[1]", "{\"learning_rate\":0.1}", "{\"lr\":\"fast\"}", "{\"nesterov\":1}",
                        "{\"optimizer\":\"sgdd\"}", "{\"seed\":-1}", "{\"dataset\":null}", "not json" };

  watch_init (&w);
  config (&cfg, 6, 0.1f, &spec);
  w.s = new_train (&w, &cfg);
  w.hook = stop_hook;
  w.stop_on = NL_SESSION_EVENT_CHECKPOINT;
  watch_run (&w);
  run = nl_session_get_run (w.s);
  nl_run_info_free (ended (&w, "stopped"));
  nl_session_free (g_steal_pointer (&w.s));

  /* resume: STARTED carries the same run at once; it finishes all 6 epochs */
  g_array_set_size (w.events, 0);
  w.hook = NULL;
  w.s = nl_session_new_resume (w.p, run, 0, NULL, &error);
  g_assert_no_error (error);
  watch_run (&w);
  g_assert_cmpint (ev (&w, 0)->kind, ==, NL_SESSION_EVENT_STARTED);
  g_assert_cmpint (ev (&w, 0)->run, ==, run);
  parent = ended (&w, "finished");
  g_assert_cmpint (parent->epochs_done, ==, 6);
  nl_session_free (g_steal_pointer (&w.s));

  /* bad overrides are refused up front, naming the setting */
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) e = NULL;
      g_assert_null (nl_session_new_fork (w.p, run, "best", NULL, bad[i], NULL, &e));
      g_assert_nonnull (e);
      g_test_message ("%s: %s", bad[i], e->message);
    }
  g_assert_null (nl_session_new_resume (w.p, 999, 0, NULL, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* fork with overrides: a new run, lineage recorded, the settings changed */
  g_array_set_size (w.events, 0);
  w.s = nl_session_new_fork (w.p, run, "last", "forked", "{\"lr\":0.01,\"epochs\":8,\"seed\":11}", NULL, &error);
  g_assert_no_error (error);
  watch_run (&w);
  forked = ev (&w, 0)->run;
  g_assert_cmpint (ev (&w, 0)->kind, ==, NL_SESSION_EVENT_STARTED);
  g_assert_cmpint (forked, >, run);
  child = ended (&w, "finished");
  g_assert_cmpint (child->id, ==, forked);
  g_assert_cmpstr (child->name, ==, "forked");
  g_assert_cmpint (child->parent_run, ==, run);
  g_assert_cmpint (child->epochs_done, ==, 8);
  g_assert_cmpint (child->seed, ==, 11);
  nl_run_config_init (&rc);
  g_assert_true (nl_run_config_from_json (&rc, child->hparams_json, &error));
  g_assert_cmpfloat (rc.optim.lr, ==, 0.01f);
  g_assert_cmpint (rc.epochs, ==, 8);
  g_assert_cmpint (rc.batch_size, ==, 32);   /* the rest is the parent's */
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_EPOCH), ==, 2);   /* from the last checkpoint, epoch 6 */
  watch_clear (&w);
}

/* The lookup hands back the bytes it checked: for "last" those of the
 * previous good checkpoint `good` (epoch 2), the damaged one's never; for
 * the damaged epoch nothing, with the error. */
static void
check_find_damaged (NlProject *p, gint64 run, gint64 good)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) got = NULL, want = NULL;
  g_autofree char *warning = NULL;
  int epoch = -1;

  g_assert_cmpint (nl_run_checkpoint_find (p, run, "last", &got, &epoch, &warning, &error), ==, good);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (warning, "using the previous good one"));
  g_assert_cmpint (epoch, ==, 2);
  want = nl_project_load_checkpoint (p, good, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (got);
  g_assert_true (g_bytes_equal (got, want));
  g_clear_pointer (&got, g_bytes_unref);
  epoch = -1;
  g_assert_cmpint (nl_run_checkpoint_find (p, run, "3", &got, &epoch, NULL, &error), ==, 0);
  g_assert_error (error, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_DAMAGED);
  g_assert_null (got);
  g_assert_cmpint (epoch, ==, -1);
}

/* The GUI's resume with a damaged last checkpoint: the run goes on from
 * the previous good one, and the warning comes as a LOG event (the
 * dashboard's log shows it). */
static void
test_resume_damaged (void)
{
  Watch w;
  g_autofree char *spec = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ckpts = NULL;
  g_autoptr (GBytes) blob = NULL;
  g_autofree char *want = NULL;
  const NlSessionEvent *log = NULL;
  gint64 run, last, step;
  int epoch;

  watch_init (&w);
  config (&cfg, 3, 0.1f, &spec);
  w.s = new_train (&w, &cfg);
  watch_run (&w);
  run = nl_session_get_run (w.s);
  nl_run_info_free (ended (&w, "finished"));
  nl_session_free (g_steal_pointer (&w.s));

  /* the last checkpoint (epoch 3) replaced by a copy with one bit flipped */
  ckpts = nl_project_list_checkpoints (w.p, run, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ckpts->len, >=, 2);
  last = g_array_index (ckpts, NlCheckpointInfo, ckpts->len - 1).id;
  blob = nl_project_load_checkpoint (w.p, last, NULL, &epoch, &step, &error);
  g_assert_no_error (error);
  g_assert_cmpint (epoch, ==, 3);
  gsize size;
  g_autofree guint8 *bad = g_memdup2 (g_bytes_get_data (blob, &size), g_bytes_get_size (blob));
  bad[size - 3] ^= 4;
  g_assert_true (nl_project_delete_checkpoint (w.p, last, &error));
  last = nl_project_add_checkpoint (w.p, run, 3, step, bad, size, NULL, NAN, TRUE, 0, &error);
  g_assert_no_error (error);
  check_find_damaged (w.p, run, g_array_index (ckpts, NlCheckpointInfo, ckpts->len - 2).id);

  g_array_set_size (w.events, 0);
  w.s = nl_session_new_resume (w.p, run, 4, NULL, &error);
  g_assert_no_error (error);
  watch_run (&w);
  nl_run_info_free (ended (&w, "finished"));
  for (guint i = 0; i < w.events->len; i++)
    if (ev (&w, i)->kind == NL_SESSION_EVENT_LOG)
      log = ev (&w, i);
  g_assert_nonnull (log);
  want = g_strdup_printf ("checkpoint %" G_GINT64_FORMAT " (epoch 3) of run %" G_GINT64_FORMAT
                          " is damaged: checksum mismatch", last, run);
  g_assert_true (g_str_has_prefix (log->message, want));
  g_assert_nonnull (strstr (log->message, "(epoch 2)"));
  g_assert_nonnull (strstr (log->message, "using the previous good one"));
  g_assert_cmpuint (count (&w, NL_SESSION_EVENT_EPOCH), ==, 2);   /* epochs 3 and 4, from epoch 2 */
  watch_clear (&w);
}

/* A run's stored settings nested 80,000 deep would overflow json-glib's
 * parser: refused by the shared guard with the depth. */
static void
test_run_config_deep (void)
{
  g_auto (NlRunConfig) rc = { 0 };
  g_autoptr (GError) error = NULL;
  g_autofree char *deep = g_strnfill (80000, '{');
  nl_run_config_init (&rc);
  g_assert_false (nl_run_config_from_json (&rc, deep, &error));
  g_assert_nonnull (error);
  g_assert_cmpstr (error->message, ==, "the run's settings: JSON nested more than 256 levels deep (at byte 256)");
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  /* a hook acting on an event (stop at the first batch, pause, stop at a
   * checkpoint) acts at that moment of training, however loaded the
   * machine: the worker waits until each event is drained */
  g_setenv ("NETLOOM_TEST_SESSION_LOCKSTEP", "1", TRUE);
  data_dir = g_dir_make_tmp ("netloom-session-data-XXXXXX", NULL);
  write_idx ("train-images-idx3-ubyte", TRUE, 600, 20, 1);
  write_idx ("train-labels-idx1-ubyte", FALSE, 600, 20, 1);
  write_idx ("t10k-images-idx3-ubyte", TRUE, 200, 20, 2);
  write_idx ("t10k-labels-idx1-ubyte", FALSE, 200, 20, 2);
  g_test_add_func ("/session/train", test_train);
  g_test_add_func ("/session/pause", test_pause);
  g_test_add_func ("/session/stop", test_stop);
  g_test_add_func ("/session/stop-paused", test_stop_paused);
  g_test_add_func ("/session/error-diverges", test_error_diverges);
  g_test_add_func ("/session/error-dataset", test_error_dataset);
  g_test_add_func ("/session/early-stop", test_early_stop);
  g_test_add_func ("/session/early-stop-min-delta", test_early_stop_min_delta);
  g_test_add_func ("/session/bad-options", test_bad_options);
  g_test_add_func ("/session/coalescing", test_coalescing);
  g_test_add_func ("/session/wakeup-once", test_wakeup_once);
  g_test_add_func ("/session/free-in-callback", test_free_in_callback);
  g_test_add_func ("/session/resume-fork", test_resume_fork);
  g_test_add_func ("/session/resume-damaged", test_resume_damaged);
  g_test_add_func ("/session/run-config-deep", test_run_config_deep);
  status = g_test_run ();
  nl_test_remove_tree (data_dir);
  return status;
}
