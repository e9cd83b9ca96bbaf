/* nl-run-row.c — a run as a list item (see nl-run-row.h). */
#include "ui/experiments/nl-run-row.h"
#include <glib/gi18n.h>
#include "core/nl-json-guard.h"
#include "core/nl-json-member.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

NlRunSnapshot *
nl_run_snapshot_load (NlProject *p, NlRunInfo *info, GError **error)
{
  g_autoptr (NlRunSnapshot) s = g_new0 (NlRunSnapshot, 1);
  g_autoptr (GArray) ckpts = NULL, int8 = NULL;
  g_autoptr (GPtrArray) notes = NULL;

  s->info = info;
  if (!(s->summaries = nl_project_list_metric_summaries (p, info->id, error))
      || !(s->tags = nl_project_list_tags (p, info->id, error))
      || !(ckpts = nl_project_list_checkpoints (p, info->id, error))
      || !(notes = nl_project_list_notes (p, info->id, error))
      || !(int8 = nl_project_list_int8_models (p, info->id, error)))
    return NULL;
  s->n_checkpoints = (int) ckpts->len;
  s->n_int8_models = (int) int8->len;
  s->int8_acc = NAN;
  for (guint i = 0; i < int8->len; i++)
    {
      double acc = g_array_index (int8, NlInt8ModelInfo, i).int8_test_acc;
      if (isfinite (acc) && !(acc <= s->int8_acc))
        s->int8_acc = acc;
    }
  s->n_notes = (int) notes->len;
  return g_steal_pointer (&s);
}

void
nl_run_snapshot_free (NlRunSnapshot *s)
{
  if (!s)
    return;
  g_clear_pointer (&s->info, nl_run_info_free);
  g_clear_pointer (&s->summaries, g_array_unref);
  g_clear_pointer (&s->tags, g_strfreev);
  g_free (s);
}

int
nl_metric_goal (const char *name)
{
  static const char *const higher[] = { "acc", "f1", "precision", "recall", "auc", "iou", "r2", NULL };
  static const char *const lower[] = { "loss", "error", "mse", "mae", "perplexity", NULL };
  if (!name)
    return 0;
  for (int i = 0; lower[i]; i++)
    if (strstr (name, lower[i]))
      return -1;
  for (int i = 0; higher[i]; i++)
    if (strstr (name, higher[i]))
      return 1;
  return 0;
}

char *
nl_metric_pretty_name (const char *split, const char *name)
{
  static const char *const names[][2] = {
    { "accuracy", "acc" }, { "batch_loss", "batch loss" }, { "images_per_s", "images/s" },
    { "epoch_seconds", "epoch s" },
  };
  const char *shown = name;
  g_autofree char *s = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_strcmp0 (name, names[i][0]) == 0)
      shown = names[i][1];
  s = g_strdup_printf ("%s %s", split ? split : "", shown ? shown : "");
  g_strstrip (s);
  s[0] = g_ascii_toupper (s[0]);
  return g_strdelimit (g_steal_pointer (&s), "_", ' ');
}

char *
nl_format_metric (double v)
{
  if (isnan (v))
    return g_strdup ("–"); /* not measured yet (or never: a run stopped before its first epoch) */
  if (fabs (v) >= 1e4)
    return g_strdup_printf ("%.0f", v);
  if (fabs (v) >= 100)
    return g_strdup_printf ("%.1f", v);
  return g_strdup_printf ("%.4f", v);
}

char *
nl_format_duration (double s)
{
  if (isnan (s) || s < 0)
    return g_strdup ("");
  if (s < 60)
    return g_strdup_printf (_("%.0f s"), s);
  if (s < 3600)
    return g_strdup_printf (_("%d min %02d s"), (int) (s / 60), (int) fmod (s, 60));
  return g_strdup_printf (_("%d h %02d min"), (int) (s / 3600), (int) fmod (s / 60, 60));
}

struct _NlRunRow {
  GObject parent_instance;
  NlRunSnapshot *snap;
  char *optimizer;
  double lr;
  int batch_size, epochs;
};

G_DEFINE_FINAL_TYPE (NlRunRow, nl_run_row, G_TYPE_OBJECT)

enum { CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
nl_run_row_finalize (GObject *object)
{
  NlRunRow *row = NL_RUN_ROW (object);
  g_clear_pointer (&row->snap, nl_run_snapshot_free);
  g_free (row->optimizer);
  G_OBJECT_CLASS (nl_run_row_parent_class)->finalize (object);
}

static void
nl_run_row_class_init (NlRunRowClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = nl_run_row_finalize;
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                   G_TYPE_NONE, 0);
}

static void
nl_run_row_init (NlRunRow *row)
{
  row->lr = NAN;
}

/* The hyper-parameters the table shows; a run with unreadable settings
 * still lists (with blanks), it just cannot be resumed. */
static void
parse_hparams (NlRunRow *row)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  const char *json = row->snap->info->hparams_json;
  const char *optimizer = NULL;
  gint64 batch_size = 0, epochs = 0;
  JsonObject *o;

  g_clear_pointer (&row->optimizer, g_free);
  row->lr = NAN;
  row->batch_size = row->epochs = 0;
  if (!json || !nl_json_check_depth (json, -1, "the run's settings", NULL)
      || !json_parser_load_from_data (parser, json, -1, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return;
  o = json_node_get_object (json_parser_get_root (parser));
  /* typed reads: a member of another type shows blank, with no critical */
  if (nl_json_string_member (o, "optimizer", &optimizer))
    row->optimizer = g_strdup (optimizer);
  if (!nl_json_number_member (o, "lr", &row->lr))
    row->lr = NAN;
  if (nl_json_int_member (o, "batch_size", &batch_size) && nl_json_int_member (o, "epochs", &epochs))
    {
      row->batch_size = (int) CLAMP (batch_size, 0, G_MAXINT);
      row->epochs = (int) CLAMP (epochs, 0, G_MAXINT);
    }
}

NlRunRow *
nl_run_row_new (NlRunSnapshot *snap)
{
  NlRunRow *row;
  g_return_val_if_fail (snap != NULL && snap->info != NULL, NULL);
  row = g_object_new (NL_TYPE_RUN_ROW, NULL);
  row->snap = snap;
  parse_hparams (row);
  return row;
}

static gboolean
same_str (const char *a, const char *b)
{
  return g_strcmp0 (a, b) == 0;
}

static gboolean
same_snapshot (const NlRunSnapshot *a, const NlRunSnapshot *b)
{
  const NlRunInfo *x = a->info, *y = b->info;
  if (!same_str (x->name, y->name) || !same_str (x->status, y->status) || !same_str (x->error, y->error)
      || !same_str (x->hparams_json, y->hparams_json) || !same_str (x->network_name, y->network_name)
      || x->epochs_done != y->epochs_done || x->started != y->started || x->finished != y->finished
      || a->n_checkpoints != b->n_checkpoints || a->n_notes != b->n_notes || a->n_int8_models != b->n_int8_models
      || !(a->int8_acc == b->int8_acc || (isnan (a->int8_acc) && isnan (b->int8_acc))))
    return FALSE;
  if (g_strv_length (a->tags) != g_strv_length (b->tags) || !g_strv_equal ((const char *const *) a->tags,
                                                                            (const char *const *) b->tags))
    return FALSE;
  /* interned names and plain numbers: no padding, so bytes compare */
  return a->summaries->len == b->summaries->len
         && memcmp (a->summaries->data, b->summaries->data, a->summaries->len * sizeof (NlMetricSummary)) == 0;
}

gboolean
nl_run_row_update (NlRunRow *row, NlRunSnapshot *snap)
{
  gboolean same;
  g_return_val_if_fail (NL_IS_RUN_ROW (row), FALSE);
  g_return_val_if_fail (snap != NULL && snap->info != NULL, FALSE);
  same = same_snapshot (row->snap, snap);
  nl_run_snapshot_free (row->snap);
  row->snap = snap;
  if (same)
    return FALSE;
  parse_hparams (row);
  g_signal_emit (row, signals[CHANGED], 0);
  return TRUE;
}

void
nl_run_row_emit_changed (NlRunRow *row)
{
  g_return_if_fail (NL_IS_RUN_ROW (row));
  g_signal_emit (row, signals[CHANGED], 0);
}

gint64
nl_run_row_get_id (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), 0);
  return row->snap->info->id;
}

const NlRunInfo *
nl_run_row_get_info (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), NULL);
  return row->snap->info;
}

const char *
nl_run_row_get_name (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), NULL);
  return row->snap->info->name ? row->snap->info->name : "";
}

const char *
nl_run_row_get_status (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), NULL);
  return row->snap->info->status ? row->snap->info->status : "";
}

const char *
nl_run_row_get_network (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), NULL);
  return row->snap->info->network_name ? row->snap->info->network_name : "";
}

gboolean
nl_run_row_is_active (NlRunRow *row)
{
  const char *s = nl_run_row_get_status (row);
  return strcmp (s, "running") == 0 || strcmp (s, "paused") == 0 || strcmp (s, "queued") == 0;
}

const char *
nl_run_row_get_optimizer (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), NULL);
  return row->optimizer ? row->optimizer : "";
}

double
nl_run_row_get_lr (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), NAN);
  return row->lr;
}

int
nl_run_row_get_batch_size (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), 0);
  return row->batch_size;
}

int
nl_run_row_get_epochs_total (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), 0);
  return MAX (row->epochs, row->snap->info->epochs_done);
}

int
nl_run_row_get_epochs_done (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), 0);
  return row->snap->info->epochs_done;
}

double
nl_run_row_get_duration (NlRunRow *row)
{
  const NlRunInfo *r;
  double end;
  g_return_val_if_fail (NL_IS_RUN_ROW (row), NAN);
  r = row->snap->info;
  if (r->started <= 0)
    return NAN;
  if (r->finished > 0)
    end = r->finished;
  else if (nl_run_row_is_active (row))
    end = g_get_real_time () / 1e6;
  else
    return NAN;
  return MAX (0, end - r->started);
}

const char *const *
nl_run_row_get_tags (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), NULL);
  return (const char *const *) row->snap->tags;
}

gboolean
nl_run_row_has_tag (NlRunRow *row, const char *tag)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), FALSE);
  return tag && g_strv_contains ((const char *const *) row->snap->tags, tag);
}

int
nl_run_row_get_n_checkpoints (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), 0);
  return row->snap->n_checkpoints;
}

int
nl_run_row_get_n_int8_models (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), 0);
  return row->snap->n_int8_models;
}

double
nl_run_row_get_int8_accuracy (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), NAN);
  return row->snap->int8_acc;
}

int
nl_run_row_get_n_notes (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), 0);
  return row->snap->n_notes;
}

GArray *
nl_run_row_get_summaries (NlRunRow *row)
{
  g_return_val_if_fail (NL_IS_RUN_ROW (row), NULL);
  return row->snap->summaries;
}

static const NlMetricSummary *
find_summary (NlRunRow *row, const char *split, const char *name)
{
  GArray *a = row->snap->summaries;
  for (guint i = 0; i < a->len; i++)
    {
      const NlMetricSummary *m = &g_array_index (a, NlMetricSummary, i);
      if (g_strcmp0 (m->name, name) == 0 && g_strcmp0 (m->split, split) == 0)
        return m;
    }
  return NULL;
}

double
nl_run_row_get_best (NlRunRow *row, const char *split, const char *name)
{
  const NlMetricSummary *m;
  g_return_val_if_fail (NL_IS_RUN_ROW (row), NAN);
  m = find_summary (row, split, name);
  if (!m || nl_metric_goal (name) == 0)
    return NAN;
  return nl_metric_goal (name) > 0 ? m->max : m->min;
}

double
nl_run_row_get_last (NlRunRow *row, const char *split, const char *name)
{
  const NlMetricSummary *m;
  g_return_val_if_fail (NL_IS_RUN_ROW (row), NAN);
  m = find_summary (row, split, name);
  return m ? m->last : NAN;
}

static gboolean
contains_folded (const char *haystack, const char *folded_needle)
{
  g_autofree char *h = NULL;
  if (!haystack)
    return FALSE;
  h = g_utf8_casefold (haystack, -1);
  return strstr (h, folded_needle) != NULL;
}

gboolean
nl_run_row_matches (NlRunRow *row, const char *needle)
{
  g_autofree char *n = NULL;
  g_return_val_if_fail (NL_IS_RUN_ROW (row), FALSE);
  if (!needle || !*needle)
    return TRUE;
  n = g_utf8_casefold (needle, -1);
  if (contains_folded (nl_run_row_get_name (row), n) || contains_folded (nl_run_row_get_network (row), n)
      || contains_folded (nl_run_row_get_status (row), n))
    return TRUE;
  for (char **t = row->snap->tags; t && *t; t++)
    if (contains_folded (*t, n))
      return TRUE;
  return FALSE;
}
