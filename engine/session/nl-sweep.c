/* nl-sweep.c — running a stored sweep: the queue of trials, ASHA's rungs
 * rebuilt from the stored metrics, trials on one or more threads. */
#include "engine/session/nl-sweep.h"
#include "core/nl-device.h"
#include "core/nl-json-guard.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

void
nl_sweep_trial_free (NlSweepTrial *t)
{
  if (!t)
    return;
  g_free (t->status);
  g_free (t->params_json);
  g_free (t);
}

/* The stored metric (name, split) a sweep's metric is. */
static gboolean
metric_key (const char *metric, const char **name, const char **split)
{
  *split = g_str_has_prefix (metric, "test_") ? "test" : "train";
  *name = !strcmp (metric, "train_loss") ? "loss" : "accuracy";
  return !strcmp (metric, "test_accuracy") || !strcmp (metric, "train_accuracy") || !strcmp (metric, "train_loss");
}

static gboolean
is_done (const char *status)
{
  return !g_strcmp0 (status, "finished") || !g_strcmp0 (status, "pruned") || !g_strcmp0 (status, "failed");
}

gboolean
nl_sweep_check (const char *space, const char *strategy, const char *metric, const char *prune,
                const NlNetwork *net, int *trials, GError **error)
{
  g_autoptr (NlSweepSpace) s = NULL;
  const NlSweepStrategy *kind;
  const char *name, *split;
  int eta, min_epochs;

  if (!space)
    return g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "--space is required"), FALSE;
  if (!(s = nl_sweep_space_parse (space, error)) || (net && !nl_sweep_space_check_network (s, net, error))
      || !(kind = nl_sweep_strategy_lookup (strategy, error)))
    return FALSE;
  if (!metric_key (metric, &name, &split))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "--metric must be test_accuracy, train_accuracy or train_loss, not '%s'", metric);
      return FALSE;
    }
  if (prune && !nl_asha_parse (prune, &eta, &min_epochs, error))
    return FALSE;
  if (kind->fixed_size)
    *trials = *trials > 0 ? MIN (*trials, kind->fixed_size (s)) : kind->fixed_size (s);
  if (*trials < 1 || *trials > 1000000)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "--trials must be between 1 and 1000000, not %d",
                   *trials);
      return FALSE;
    }
  return TRUE;
}

/* ---- the base settings: the stored ones and the rest of the table ---- */

/* A run stores only its settings; a sweep keeps the rest of the train
 * options too (checkpoint policy, early stopping, the evaluation set,
 * scheduler threads), for every trial to come. The device has a column. */
static char *
base_to_json (const NlRunConfig *rc)
{
  g_autofree char *stored = nl_run_config_to_json (rc);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  JsonObject *o;
  const NlRunField *fields;
  guint n;

  if (!json_parser_load_from_data (parser, stored, -1, NULL))
    g_return_val_if_reached (NULL);   /* written just now */
  o = json_node_get_object (json_parser_get_root (parser));
  fields = nl_run_config_fields (&n);
  for (guint i = 0; i < n; i++)
    {
      const NlRunField *f = &fields[i];
      if (f->flags & NL_RUN_FIELD_STORED)
        continue;
      if (f->type == NL_RUN_FIELD_INT)
        json_object_set_int_member (o, f->name, (gint64) nl_run_field_get_number (f, rc));
      else if (f->type == NL_RUN_FIELD_DOUBLE || f->type == NL_RUN_FIELD_FLOAT)
        json_object_set_double_member (o, f->name, nl_run_field_get_number (f, rc));
      else if (f->type == NL_RUN_FIELD_BOOL)
        json_object_set_boolean_member (o, f->name, nl_run_field_get_number (f, rc) != 0);
    }
  /* the strings by name: the table gives no getter for them */
  json_object_set_string_member (o, "val_dataset", rc->val_dataset);
  json_object_set_string_member (o, "monitor", rc->monitor);
  json_object_set_string_member (o, "early_stop_metric", rc->early_stop_metric);
  json_generator_set_root (gen, json_parser_get_root (parser));
  return nl_json_fix_numbers (json_generator_to_data (gen, NULL));
}

static gboolean
base_from_json (NlRunConfig *rc, const char *json, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  const NlRunField *fields;
  JsonObject *o;
  guint n;

  if (!nl_run_config_from_json (rc, json, error) || !json_parser_load_from_data (parser, json, -1, error))
    return FALSE;
  o = json_node_get_object (json_parser_get_root (parser));
  fields = nl_run_config_fields (&n);
  for (guint i = 0; i < n; i++)
    {
      const NlRunField *f = &fields[i];
      JsonNode *m = json_object_get_member (o, f->name);
      if ((f->flags & NL_RUN_FIELD_STORED) || f->type == NL_RUN_FIELD_DEVICE || !m || JSON_NODE_HOLDS_NULL (m))
        continue;
      /* a stored sweep is anyone's file: an array or object here would
       * reach json-glib's getters, which raise criticals on it */
      if (!JSON_NODE_HOLDS_VALUE (m))
        {
          g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                       "the sweep's settings: \"%s\" must be a number, true or false, or text", f->name);
          return FALSE;
        }
      if (json_node_get_value_type (m) == G_TYPE_STRING)
        {
          if (!nl_run_field_set_text (f, rc, json_node_get_string (m), error))
            return FALSE;
        }
      else if (json_node_get_value_type (m) == G_TYPE_BOOLEAN)
        nl_run_field_set_number (f, rc, json_node_get_boolean (m));
      else
        nl_run_field_set_number (f, rc, json_node_get_double (m));
    }
  return TRUE;
}

gint64
nl_sweep_create (NlProject *p, const char *name, const NlNetwork *net, const NlRunConfig *base, const char *space,
                 const char *strategy, int trials, const char *metric, gboolean maximize, const char *prune,
                 int parallel, GError **error)
{
  g_autofree char *net_json = NULL, *hp = NULL, *device = NULL, *default_name = NULL;
  NlSweepInfo info = { 0 };

  if (!nl_run_config_check (base, error) || !nl_sweep_check (space, strategy, metric, prune, net, &trials, error))
    return 0;
  net_json = nl_network_to_json (net);
  hp = base_to_json (base);
  device = nl_device_to_string (base->device);
  default_name = g_strdup_printf ("%s %s", net->name, strategy);
  info = (NlSweepInfo) { .name = (char *) (name ? name : default_name), .network_name = net->name,
                         .network_json = net_json, .hparams_json = hp, .device = device, .space = (char *) space,
                         .strategy = (char *) strategy, .trials = trials, .metric = (char *) metric,
                         .maximize = maximize, .prune = (char *) prune, .parallel = MAX (parallel, 1),
                         .seed = (gint64) base->seed };
  return nl_project_create_sweep (p, &info, error);
}

/* ---- one sweep's state while it runs ---- */

typedef struct {
  NlSweepTrial t;
  double *point;
  int rungs_seen;            /* rungs this trial has reported to ASHA already */
} Slot;

typedef struct {
  NlProject *p;
  NlSweepInfo *info;
  NlSweepSpace *space;
  const NlSweepStrategy *strategy;
  NlNetwork *net;
  NlRunConfig base;
  NlAsha *asha;              /* NULL: no pruning */
  const char *metric_name, *metric_split;
  const NlSweepCallbacks *cb;
  GMutex lock;
  Slot **slots;              /* [info->trials], NULL: not created yet */
  GQueue resume;             /* Slot* to continue */
  int n_done, threads_each;
  gboolean stopped;
  GError *error;             /* the first error that ends the sweep */
} Sweep;

static void
slot_free (Slot *s)
{
  if (!s)
    return;
  g_free (s->t.status);
  g_free (s->t.params_json);
  g_free (s->point);
  g_free (s);
}

static double
last_value (Sweep *s, gint64 run)
{
  double last = NAN;
  nl_project_metric_summary (s->p, run, s->metric_name, s->metric_split, NULL, NULL, &last, NULL);
  return last;
}

/* The values a trial reported at each rung up to its epochs done. */
static void
replay_rungs (Sweep *s, Slot *slot)
{
  g_autoptr (GArray) rows = nl_project_get_metrics (s->p, slot->t.run, s->metric_name, 0, NULL, NULL);
  g_autoptr (GArray) at = g_array_new (FALSE, FALSE, sizeof (double));

  for (guint i = 0; rows && i < rows->len; i++)
    {
      const NlMetricRow *m = &g_array_index (rows, NlMetricRow, i);
      int rung = nl_asha_rung (s->asha, m->epoch);
      if (rung < 0 || m->epoch > slot->t.epochs || strcmp (m->split, s->metric_split) != 0)
        continue;
      double none = NAN;
      while ((int) at->len <= rung)
        g_array_append_val (at, none);
      g_array_index (at, double, rung) = m->value;  /* an epoch trained again: its last value */
    }
  for (guint k = 0; k < at->len; k++)
    if (!isnan (g_array_index (at, double, k)))
      nl_asha_record (s->asha, (int) k, g_array_index (at, double, k));
  slot->rungs_seen = (int) at->len;
}

static gboolean
load (Sweep *s, GError **error)
{
  g_autoptr (GPtrArray) runs = nl_project_list_sweep_runs (s->p, s->info->id, error);
  int dim = nl_sweep_space_dim (s->space);

  if (!runs)
    return FALSE;
  for (guint i = 0; i < runs->len; i++)
    {
      NlRunInfo *r = g_ptr_array_index (runs, i);
      Slot *slot;
      if (r->sweep_trial < 0 || r->sweep_trial >= s->info->trials || s->slots[r->sweep_trial])
        continue;
      if (!g_strcmp0 (r->status, "running"))
        {
          g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                       "sweep %" G_GINT64_FORMAT " is running: its trial %d (run %" G_GINT64_FORMAT
                       ") is trained by process %" G_GINT64_FORMAT " on %s", s->info->id, r->sweep_trial, r->id,
                       r->pid, r->host ? r->host : "?");
          return FALSE;
        }
      slot = g_new0 (Slot, 1);
      slot->t = (NlSweepTrial) { .trial = r->sweep_trial, .run = r->id, .status = g_strdup (r->status),
                                 .params_json = g_strdup (r->sweep_params), .epochs = r->epochs_done };
      slot->t.value = last_value (s, r->id);
      slot->point = g_new0 (double, dim);
      s->slots[r->sweep_trial] = slot;
      if (!r->sweep_params || !nl_sweep_space_point_from_json (s->space, r->sweep_params, slot->point, error))
        {
          g_prefix_error (error, "trial %d (run %" G_GINT64_FORMAT "): ", r->sweep_trial, r->id);
          return FALSE;
        }
      if (s->asha)
        replay_rungs (s, slot);
      if (is_done (r->status))
        s->n_done++;
      else
        g_queue_push_tail (&s->resume, slot);
    }
  return TRUE;
}

/* The trials with a value, by trial number: TPE's history. */
static void
history (Sweep *s, GArray *points, GArray *values)
{
  int dim = nl_sweep_space_dim (s->space);
  for (int i = 0; i < s->info->trials; i++)
    {
      Slot *slot = s->slots[i];
      if (slot && is_done (slot->t.status) && !isnan (slot->t.value))
        {
          g_array_append_vals (points, slot->point, dim);
          g_array_append_val (values, slot->t.value);
        }
    }
}

/* With the lock held: a trial to continue, else the first trial number
 * not created yet with its sampled values, else NULL. */
static Slot *
next_job (Sweep *s)
{
  Slot *slot;
  int dim = nl_sweep_space_dim (s->space);

  if (s->error || s->stopped)
    return NULL;
  if ((slot = g_queue_pop_head (&s->resume)))
    return slot;
  for (int i = 0; i < s->info->trials; i++)
    if (!s->slots[i])
      {
        g_autoptr (GArray) points = g_array_new (FALSE, FALSE, sizeof (double));
        g_autoptr (GArray) values = g_array_new (FALSE, FALSE, sizeof (double));
        NlSweepHistory h = { 0 };
        if (s->strategy->needs_history)
          {
            history (s, points, values);
            h = (NlSweepHistory) { (const double *) points->data, (const double *) values->data,
                                   (int) values->len, s->info->maximize };
          }
        slot = g_new0 (Slot, 1);
        slot->point = g_new0 (double, dim);
        slot->t.trial = i;
        slot->t.value = NAN;
        s->strategy->sample (s->space, (guint64) s->info->seed, i, s->strategy->needs_history ? &h : NULL,
                             slot->point);
        slot->t.params_json = nl_sweep_space_point_to_json (s->space, slot->point);
        s->slots[i] = slot;
        return slot;
      }
  return NULL;
}

/* ---- a trial's run ---- */

typedef struct {
  Sweep *s;
  Slot *slot;
  int epochs;                /* the trial's: its last epoch is never pruned */
} Job;

static gboolean
job_batch (gpointer user, int epoch, int64_t batch, int64_t n_batches, double loss, double elapsed)
{
  Job *j = user;
  return !j->s->cb->keep_going || j->s->cb->keep_going (j->s->cb->user);
}

static void
job_created (gpointer user, gint64 run)
{
  Job *j = user;
  g_mutex_lock (&j->s->lock);
  j->slot->t.run = run;
  g_mutex_unlock (&j->s->lock);
}

static gboolean
job_prune (gpointer user, gint64 run, const NlEpochReport *e, char **message)
{
  Job *j = user;
  Sweep *s = j->s;
  double value = nl_run_metric_value (s->info->metric, e);
  int rung = nl_asha_rung (s->asha, e->epoch);
  gboolean prune;

  if (rung < 0 || e->epoch >= j->epochs)
    return FALSE;
  g_mutex_lock (&s->lock);
  if (rung < j->slot->rungs_seen)   /* an epoch trained again after a crash: counted once */
    prune = !nl_asha_promotable (s->asha, rung, value);
  else
    {
      prune = nl_asha_report (s->asha, e->epoch, value);
      j->slot->rungs_seen = rung + 1;
    }
  g_mutex_unlock (&s->lock);
  if (prune)
    *message = g_strdup_printf ("pruned by ASHA at epoch %d (%s %.4f, rung %d)", e->epoch, s->info->metric, value,
                                rung);
  return prune;
}

static gboolean
train_new (Sweep *s, Job *j, GError **error)
{
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (NlNetwork) net = nl_network_copy (s->net);
  g_autofree char *name = g_strdup_printf ("%s trial %d", s->info->name, j->slot->t.trial);
  NlRunTrial link = { s->info->id, j->slot->t.trial, j->slot->t.params_json };
  NlRunCallbacks rcb = { .chain = { .batch = job_batch, .user = j }, .created = job_created,
                         .prune = s->asha ? job_prune : NULL };

  nl_run_config_copy (&cfg, &s->base);
  cfg.threads = s->threads_each;
  if (!nl_sweep_space_apply (s->space, j->slot->point, &cfg, net, error))
    return FALSE;
  j->epochs = cfg.epochs;
  return nl_run_train_trial (s->p, name, net, &cfg, &link, &rcb, NULL, error);
}

/* A trial left unfinished: continued from its last checkpoint, or, with
 * none, trained again from the start under the same trial number. */
static gboolean
continue_trial (Sweep *s, Job *j, GError **error)
{
  Slot *slot = j->slot;
  NlRunCallbacks rcb = { .chain = { .batch = job_batch, .user = j }, .prune = s->asha ? job_prune : NULL };
  g_autoptr (NlRunInfo) info = nl_project_get_run (s->p, slot->t.run, error);
  g_auto (NlRunConfig) rc = { 0 };
  gint64 ckpt;

  if (!info)
    return FALSE;
  nl_run_config_init (&rc);
  j->epochs = nl_run_config_from_json (&rc, info->hparams_json, NULL) ? rc.epochs : s->base.epochs;
  /* maybe one taken inside its first epoch, by time */
  ckpt = nl_project_find_checkpoint (s->p, slot->t.run, "last", NULL);
  if (ckpt <= 0)
    {
      if (!nl_project_delete_run (s->p, slot->t.run, error))
        return FALSE;
      slot->t.run = 0;
      return train_new (s, j, error);
    }
  /* killed after an epoch at a rung was stored but before ASHA decided */
  if (s->asha && nl_asha_rung (s->asha, slot->t.epochs) >= 0 && slot->t.epochs < j->epochs
      && !nl_asha_promotable (s->asha, nl_asha_rung (s->asha, slot->t.epochs), slot->t.value))
    {
      g_autofree char *msg = g_strdup_printf ("pruned by ASHA at epoch %d", slot->t.epochs);
      return nl_project_set_run_status (s->p, slot->t.run, "pruned", msg, error);
    }
  return nl_run_resume (s->p, slot->t.run, 0, &s->base, &rcb, error);
}

/* With the lock held: the trial's outcome as the project has it. */
static void
settle (Sweep *s, Slot *slot, GError *local)
{
  g_autoptr (NlRunInfo) info = slot->t.run > 0 ? nl_project_get_run (s->p, slot->t.run, NULL) : NULL;

  if (info)
    {
      g_free (slot->t.status);
      slot->t.status = g_strdup (info->status);
      slot->t.epochs = info->epochs_done;
      slot->t.value = last_value (s, slot->t.run);
    }
  if (info && is_done (info->status))
    {
      s->n_done++;
      if (s->cb->trial_done)
        s->cb->trial_done (s->cb->user, &slot->t, s->n_done, s->info->trials);
    }
  else if (info && !g_strcmp0 (info->status, "stopped"))
    s->stopped = TRUE;
  else if (!s->error)
    {
      /* the run was never created, or its status never written */
      s->error = local ? g_error_copy (local)
                       : g_error_new (NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "trial %d did not end", slot->t.trial);
      g_prefix_error (&s->error, "trial %d: ", slot->t.trial);
    }
}

static gpointer
worker (gpointer data)
{
  Sweep *s = data;
  for (;;)
    {
      g_autoptr (GError) local = NULL;
      Job j = { s, NULL, 0 };
      gboolean again;

      g_mutex_lock (&s->lock);
      j.slot = next_job (s);
      again = j.slot && j.slot->t.run > 0;
      g_mutex_unlock (&s->lock);
      if (!j.slot)
        return NULL;
      /* a failed trial is recorded by its run's status; settle reads it */
      if (!(again ? continue_trial (s, &j, &local) : train_new (s, &j, &local)))
        g_debug ("sweep trial %d: %s", j.slot->t.trial, local ? local->message : "?");
      g_mutex_lock (&s->lock);
      settle (s, j.slot, local);
      g_mutex_unlock (&s->lock);
    }
}

static void
sweep_clear (Sweep *s)
{
  for (int i = 0; s->slots && s->info && i < s->info->trials; i++)
    slot_free (s->slots[i]);
  g_free (s->slots);
  g_queue_clear (&s->resume);
  nl_sweep_info_free (s->info);
  nl_sweep_space_free (s->space);
  if (s->net)
    nl_network_free (s->net);
  nl_run_config_clear (&s->base);
  nl_asha_free (s->asha);
  g_clear_error (&s->error);
  g_mutex_clear (&s->lock);
}

/* Everything the stored sweep says, parsed. */
static gboolean
sweep_open (Sweep *s, NlProject *p, gint64 id, GError **error)
{
  int eta, min_epochs, max_epochs;

  s->p = p;
  g_mutex_init (&s->lock);
  nl_run_config_init (&s->base);
  if (!(s->info = nl_project_get_sweep (p, id, error)))
    return FALSE;
  s->slots = g_new0 (Slot *, s->info->trials);
  if (!(s->space = nl_sweep_space_parse (s->info->space, error))
      || !(s->strategy = nl_sweep_strategy_lookup (s->info->strategy, error))
      || !(s->net = nl_network_load_data (s->info->network_json, -1, error))
      || !base_from_json (&s->base, s->info->hparams_json, error)
      || (s->info->device && !nl_device_parse (s->info->device, &s->base.device, error)))
    return FALSE;
  metric_key (s->info->metric, &s->metric_name, &s->metric_split);
  if (s->info->prune)
    {
      if (!nl_asha_parse (s->info->prune, &eta, &min_epochs, error))
        return FALSE;
      max_epochs = s->base.epochs;
      for (int i = 0; i < nl_sweep_space_dim (s->space); i++)
        {
          const NlSweepParam *q = nl_sweep_space_param (s->space, i);
          if (q->field && !strcmp (q->field->name, "epochs"))
            max_epochs = G_MAXINT / 2;   /* each trial's own last epoch bounds its rungs */
        }
      s->asha = nl_asha_new (eta, min_epochs, max_epochs, s->info->maximize);
    }
  return TRUE;
}

gboolean
nl_sweep_run (NlProject *p, gint64 sweep, int parallel, const NlSweepCallbacks *cb, GError **error)
{
  static const NlSweepCallbacks no_callbacks;
  Sweep s = { 0 };
  int n_workers, threads;
  gboolean ok;

  g_return_val_if_fail (p != NULL, FALSE);
  s.cb = cb ? cb : &no_callbacks;
  if (!sweep_open (&s, p, sweep, error) || !nl_device_check (s.base.device, error) || !load (&s, error)
      || !nl_project_set_sweep_status (p, sweep, "running", error))
    {
      sweep_clear (&s);
      return FALSE;
    }
  parallel = parallel > 0 ? parallel : MAX (s.info->parallel, 1);
  n_workers = MIN (parallel, s.info->trials);
  /* the threads divided among the trials at once */
  threads = s.base.threads > 0 ? s.base.threads : (int) g_get_num_processors ();
  s.threads_each = parallel > 1 ? MAX (threads / parallel, 1) : s.base.threads;
  if (n_workers <= 1)
    worker (&s);
  else
    {
      g_autoptr (GPtrArray) threads_list = g_ptr_array_new ();
      for (int i = 0; i < n_workers; i++)
        g_ptr_array_add (threads_list, g_thread_new ("nl-sweep-trial", worker, &s));
      for (guint i = 0; i < threads_list->len; i++)
        g_thread_join (g_ptr_array_index (threads_list, i));
    }
  ok = !s.error && !s.stopped && s.n_done >= s.info->trials;
  if (!nl_project_set_sweep_status (p, sweep, ok ? "finished" : "stopped", s.error ? NULL : error))
    ok = FALSE;
  else if (s.error)
    g_propagate_error (error, g_steal_pointer (&s.error));
  else if (!ok)
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED, "sweep %" G_GINT64_FORMAT " stopped after %d of %d "
                 "trials (continue it with --resume %" G_GINT64_FORMAT ")", sweep, s.n_done, s.info->trials, sweep);
  sweep_clear (&s);
  return ok;
}

static int
by_trial (gconstpointer a, gconstpointer b)
{
  return (*(NlSweepTrial *const *) a)->trial - (*(NlSweepTrial *const *) b)->trial;
}

GPtrArray *
nl_sweep_list_trials (NlProject *p, gint64 sweep, GError **error)
{
  g_autoptr (NlSweepInfo) info = nl_project_get_sweep (p, sweep, error);
  g_autoptr (GPtrArray) runs = info ? nl_project_list_sweep_runs (p, sweep, error) : NULL;
  GPtrArray *out;
  const char *name, *split;

  if (!runs)
    return NULL;
  metric_key (info->metric, &name, &split);
  out = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_sweep_trial_free);
  for (guint i = 0; i < runs->len; i++)
    {
      NlRunInfo *r = g_ptr_array_index (runs, i);
      NlSweepTrial *t = g_new0 (NlSweepTrial, 1);
      *t = (NlSweepTrial) { .trial = r->sweep_trial, .run = r->id, .status = g_strdup (r->status),
                            .params_json = g_strdup (r->sweep_params), .value = NAN, .epochs = r->epochs_done };
      nl_project_metric_summary (p, r->id, name, split, NULL, NULL, &t->value, NULL);
      g_ptr_array_add (out, t);
    }
  g_ptr_array_sort (out, by_trial);
  return out;
}

const NlSweepTrial *
nl_sweep_best_trial (GPtrArray *trials, gboolean maximize)
{
  const NlSweepTrial *best = NULL;
  for (guint i = 0; i < trials->len; i++)
    {
      const NlSweepTrial *t = g_ptr_array_index (trials, i);
      if (isnan (t->value) || !is_done (t->status) || !g_strcmp0 (t->status, "failed"))
        continue;
      if (!best || (maximize ? t->value > best->value : t->value < best->value))
        best = t;
    }
  return best;
}
