/* nl-checkpoint.c — checkpoints and weights files over nl-safetensors:
 * naming the model's tensors, checking a file against the model in full
 * before copying, and the trainer position in the metadata. */
#include "engine/formats/nl-checkpoint.h"

#include <math.h>
#include <string.h>
#include <zlib.h>

#include "engine/formats/nl-safetensors.h"

G_DEFINE_QUARK (nl-checkpoint-error-quark, nl_checkpoint_error)

void
nl_train_position_clear (NlTrainPosition *pos)
{
  g_clear_pointer (&pos->optimizer, g_free);
  g_clear_pointer (&pos->extra_json, g_free);
}

char *
nl_checkpoint_network_hash (const NlNetwork *net)
{
  g_autoptr (NlNetwork) c = nl_network_copy (net);
  g_autofree char *json = NULL;
  /* layout and title are not structure */
  g_free (c->name);
  c->name = g_strdup ("");
  for (int i = 0; i < nl_network_n_nodes (c); i++)
    nl_network_node (c, i)->has_position = FALSE;
  json = nl_network_to_json (c);
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, json, -1);
}

/* ---- the model's tensors by name ---- */

typedef struct {
  char *name;
  NlTensor *t;
  gboolean state;   /* optimizer state */
} Entry;

static void
entry_clear (gpointer p)
{
  g_free (((Entry *) p)->name);
}

static void
add_entry (GArray *a, char *name, NlTensor *t, gboolean state)
{
  Entry e = { name, t, state };
  /* the model makes every tensor with nl_tensor_new: contiguous, no offset games */
  g_assert (nl_tensor_is_contiguous (t) && t->dtype == NL_DTYPE_F32);
  g_array_append_val (a, e);
}

/* Weights and aux by node, then optimizer state (with_state). */
static GArray *
model_entries (const NlModel *m, gboolean with_state)
{
  GArray *a = g_array_new (FALSE, TRUE, sizeof (Entry));
  g_array_set_clear_func (a, entry_clear);
  for (int i = 0; i < m->n_nodes; i++)
    {
      const NlNode *n = nl_network_node (m->net, i);
      for (int k = 0; k < n->def->n_weights && k < NL_GRAPH_MAX_SLOTS; k++)
        if (m->weights[NL_MODEL_SLOT (i, k)])
          add_entry (a, nl_model_weight_name (m, i, k), m->weights[NL_MODEL_SLOT (i, k)], FALSE);
      for (int k = 0; k < n->def->n_aux && k < NL_GRAPH_MAX_SLOTS; k++)
        if (m->aux[NL_MODEL_SLOT (i, k)])
          add_entry (a, g_strdup_printf ("%s.%s", n->id, n->def->aux[k]), m->aux[NL_MODEL_SLOT (i, k)], FALSE);
    }
  if (with_state)
    for (int i = 0; i < m->n_nodes; i++)
      for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
        for (int s = 0; s < 4; s++)
          {
            NlTensor *t = m->opt_state[NL_MODEL_SLOT (i, k) * 4 + s];
            if (t && m->weights[NL_MODEL_SLOT (i, k)])
              {
                g_autofree char *w = nl_model_weight_name (m, i, k);
                add_entry (a, g_strdup_printf (NL_CHECKPOINT_STATE_PREFIX "%s/%d", w, s), t, TRUE);
              }
          }
  return a;
}

static void
add_entries (NlSafetensorsWriter *w, GArray *entries)
{
  for (guint i = 0; i < entries->len; i++)
    {
      const Entry *e = &g_array_index (entries, Entry, i);
      nl_safetensors_writer_add (w, e->name, NL_ST_F32, e->t->ndim, e->t->shape, nl_tensor_f32 (e->t));
    }
}

/* NULL when t fits e; else the problem ("has shape ... but ..."). */
static char *
tensor_mismatch (const Entry *e, const NlStTensor *t)
{
  gboolean same = t->ndim == e->t->ndim;
  for (int d = 0; same && d < t->ndim; d++)
    same = t->shape[d] == e->t->shape[d];
  if (t->dtype != NL_ST_F32)
    return g_strdup_printf ("is %s but the network needs F32", nl_st_dtype_name (t->dtype));
  if (!same)
    {
      g_autofree char *have = nl_st_format_shape (t->ndim, t->shape);
      g_autofree char *need = nl_st_format_shape (e->t->ndim, e->t->shape);
      return g_strdup_printf ("has shape %s but the network needs %s", have, need);
    }
  return NULL;
}

static void
copy_in (const Entry *e, const NlStTensor *t)
{
  if (t->end > t->begin)
    memcpy (nl_tensor_f32 (e->t), t->data, t->end - t->begin);
}

/* ---- checksums ---- */

/* The data section's crc32 as the metadata holds it: the writer lays the
 * tensors out in the order added, back to back. */
static char *
entries_crc (GArray *entries)
{
  uLong crc = crc32_z (0, NULL, 0);
  for (guint i = 0; i < entries->len; i++)
    {
      const Entry *e = &g_array_index (entries, Entry, i);
      crc = crc32_z (crc, (const Bytef *) nl_tensor_f32 (e->t), (size_t) nl_tensor_numel (e->t) * sizeof (float));
    }
  return g_strdup_printf ("%08lx", crc);
}

/* The crc32 of everything after the header against the metadata's. */
static gboolean
data_crc_matches (const NlSafetensors *st, GBytes *blob, GError **error)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (blob, &size);
  const char *want = nl_safetensors_metadata (st, "crc32");
  guint64 hlen = 0;
  for (int i = 0; i < 8; i++)
    hlen |= (guint64) data[i] << (8 * i);
  /* parsing checked that the header fits */
  char have[16];
  g_snprintf (have, sizeof have, "%08lx", crc32_z (0, data + 8 + hlen, size - 8 - hlen));
  if (!want || g_ascii_strcasecmp (want, have) != 0)
    {
      g_set_error (error, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_DAMAGED,
                   "checksum mismatch (data crc32 %s, metadata crc32 %s)", have, want ? want : "missing");
      return FALSE;
    }
  return TRUE;
}

/* Version 2 on: the crc32 of everything after the header. */
static gboolean
check_crc (const NlSafetensors *st, GBytes *blob, GError **error)
{
  guint64 version = 0;
  const char *v = nl_safetensors_metadata (st, "version"); /* check_format read it */
  if (!v || !g_ascii_string_to_unsigned (v, 10, 1, G_MAXINT, &version, NULL) || version < 2)
    return TRUE; /* written before checksums */
  return data_crc_matches (st, blob, error);
}

/* ---- checkpoints ---- */

static void
set_meta_int (NlSafetensorsWriter *w, const char *key, gint64 v)
{
  g_autofree char *text = g_strdup_printf ("%" G_GINT64_FORMAT, v);
  nl_safetensors_writer_set_metadata (w, key, text);
}

/* %.17g: reads back to the same double */
static void
set_meta_double (NlSafetensorsWriter *w, const char *key, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  nl_safetensors_writer_set_metadata (w, key, g_ascii_dtostr (buf, sizeof buf, v));
}

GBytes *
nl_checkpoint_save (const NlModel *m, const NlTrainPosition *pos, GError **error)
{
  g_autoptr (NlSafetensorsWriter) w = nl_safetensors_writer_new ();
  g_autoptr (GArray) entries = NULL;
  g_autofree char *hash = NULL, *epoch = NULL, *updates = NULL, *seed = NULL;
  const NlTrainPosition start = { 0 };

  if (!pos)
    pos = &start;
  /* queued updates write the weights: let them land first */
  if (!nl_model_sync ((NlModel *) m, error))
    return NULL;
  entries = model_entries (m, TRUE);
  hash = nl_checkpoint_network_hash (m->net);
  epoch = g_strdup_printf ("%d", pos->epoch);
  updates = g_strdup_printf ("%" G_GINT64_FORMAT, pos->updates);
  seed = g_strdup_printf ("%" G_GUINT64_FORMAT, pos->seed);
  nl_safetensors_writer_set_metadata (w, "format", NL_CHECKPOINT_FORMAT);
  nl_safetensors_writer_set_metadata (w, "version", G_STRINGIFY (NL_CHECKPOINT_VERSION));
  nl_safetensors_writer_set_metadata (w, "epoch", epoch);
  nl_safetensors_writer_set_metadata (w, "updates", updates);
  nl_safetensors_writer_set_metadata (w, "seed", seed);
  nl_safetensors_writer_set_metadata (w, "optimizer", pos->optimizer ? pos->optimizer : "");
  nl_safetensors_writer_set_metadata (w, "network_hash", hash);
  if (pos->extra_json)
    nl_safetensors_writer_set_metadata (w, "extra", pos->extra_json);
  g_autofree char *crc = entries_crc (entries);
  nl_safetensors_writer_set_metadata (w, "crc32", crc);
  if (pos->loss_scale > 0)
    {
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      g_autofree char *skipped = g_strdup_printf ("%" G_GINT64_FORMAT, pos->skipped);
      nl_safetensors_writer_set_metadata (w, "loss_scale", g_ascii_dtostr (buf, sizeof buf, pos->loss_scale));
      nl_safetensors_writer_set_metadata (w, "skipped_steps", skipped);
      set_meta_int (w, "loss_scale_good_steps", pos->good_steps);
      set_meta_int (w, "loss_scale_bad_steps", pos->bad_steps);
    }
  if (pos->batch > 0)
    {
      set_meta_int (w, "batch", pos->batch);
      set_meta_double (w, "epoch_loss", pos->epoch_loss);
      set_meta_int (w, "epoch_seen", pos->epoch_seen);
      set_meta_double (w, "epoch_correct", pos->epoch_correct);
      set_meta_int (w, "epoch_counted", pos->epoch_counted);
      set_meta_double (w, "epoch_seconds", pos->epoch_seconds);
    }
  add_entries (w, entries);
  return nl_safetensors_writer_finish (w, error);
}

static gboolean
format_error (GError **error, int code, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

static gboolean
format_error (GError **error, int code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  if (error)
    *error = g_error_new_valist (NL_CHECKPOINT_ERROR, code, fmt, ap);
  va_end (ap);
  return FALSE;
}

/* format and version of a netloom file */
static gboolean
check_format (const NlSafetensors *st, const char *format, GError **error)
{
  const char *f = nl_safetensors_metadata (st, "format");
  const char *v = nl_safetensors_metadata (st, "version");
  guint64 version;
  if (!f || strcmp (f, format) != 0)
    return format_error (error, NL_CHECKPOINT_ERROR_FORMAT, "not a %s file (metadata format is %s%s%s)", format,
                         f ? "'" : "", f ? f : "missing", f ? "'" : "");
  if (!v || !g_ascii_string_to_unsigned (v, 10, 1, G_MAXINT, &version, NULL))
    return format_error (error, NL_CHECKPOINT_ERROR_FORMAT, "%s metadata version is %s%s%s, not a positive integer",
                         format, v ? "'" : "", v ? v : "missing", v ? "'" : "");
  if (version > NL_CHECKPOINT_VERSION)
    return format_error (error, NL_CHECKPOINT_ERROR_VERSION,
                         "%s version %" G_GUINT64_FORMAT " is newer than this netloom reads (%d)", format, version,
                         NL_CHECKPOINT_VERSION);
  return TRUE;
}

static gboolean
meta_double (const NlSafetensors *st, const char *key, double *out, GError **error)
{
  const char *v = nl_safetensors_metadata (st, key);
  char *end = NULL;
  if (!v)
    return format_error (error, NL_CHECKPOINT_ERROR_FORMAT, "checkpoint metadata '%s' is missing", key);
  *out = g_ascii_strtod (v, &end);
  if (end == v || *end || !isfinite (*out))
    return format_error (error, NL_CHECKPOINT_ERROR_FORMAT, "checkpoint metadata '%s' is '%s', not a number", key, v);
  return TRUE;
}

static gboolean
meta_int (const NlSafetensors *st, const char *key, gboolean is_unsigned, gint64 min, gint64 max, gint64 *s,
          guint64 *u, GError **error)
{
  const char *v = nl_safetensors_metadata (st, key);
  gboolean ok = v && (is_unsigned ? g_ascii_string_to_unsigned (v, 10, 0, G_MAXUINT64, u, NULL)
                                  : g_ascii_string_to_signed (v, 10, min, max, s, NULL));
  if (!v)
    return format_error (error, NL_CHECKPOINT_ERROR_FORMAT, "checkpoint metadata '%s' is missing", key);
  if (!ok)
    return format_error (error, NL_CHECKPOINT_ERROR_FORMAT, "checkpoint metadata '%s' is '%s', not an integer%s", key,
                         v, min >= 0 || is_unsigned ? " >= 0" : "");
  return TRUE;
}

/* The training position in the metadata, the optimizer and extra aside */
static gboolean
read_position (NlSafetensors *st, NlTrainPosition *pos, GError **error)
{
  gint64 epoch, updates, skipped = 0, good = 0, bad = 0;
  guint64 seed;
  double loss_scale = 0;
  NlTrainPosition within = { 0 };


  if (!check_format (st, NL_CHECKPOINT_FORMAT, error)
      || !meta_int (st, "epoch", FALSE, 0, G_MAXINT, &epoch, NULL, error)
      || !meta_int (st, "updates", FALSE, 0, G_MAXINT64, &updates, NULL, error)
      || !meta_int (st, "seed", TRUE, 0, 0, NULL, &seed, error))
    return FALSE;
  if (nl_safetensors_metadata (st, "loss_scale"))
    {
      /* written by fp16 runs only */
      const char *v = nl_safetensors_metadata (st, "loss_scale");
      char *end = NULL;
      loss_scale = g_ascii_strtod (v, &end);
      if (end == v || *end || !(loss_scale > 0) || !isfinite (loss_scale))
        return format_error (error, NL_CHECKPOINT_ERROR_FORMAT,
                             "checkpoint metadata 'loss_scale' is '%s', not a number > 0", v);
      if (!meta_int (st, "skipped_steps", FALSE, 0, G_MAXINT64, &skipped, NULL, error))
        return FALSE;
      /* checkpoints from before mid-epoch resume lack the streaks: 0 */
      if ((nl_safetensors_metadata (st, "loss_scale_good_steps")
           && !meta_int (st, "loss_scale_good_steps", FALSE, 0, G_MAXINT, &good, NULL, error))
          || (nl_safetensors_metadata (st, "loss_scale_bad_steps")
              && !meta_int (st, "loss_scale_bad_steps", FALSE, 0, G_MAXINT, &bad, NULL, error)))
        return FALSE;
    }
  if (nl_safetensors_metadata (st, "batch"))
    {
      /* taken inside an epoch */
      if (!meta_int (st, "batch", FALSE, 0, G_MAXINT64, &within.batch, NULL, error)
          || !meta_double (st, "epoch_loss", &within.epoch_loss, error)
          || !meta_int (st, "epoch_seen", FALSE, 0, G_MAXINT64, &within.epoch_seen, NULL, error)
          || !meta_double (st, "epoch_correct", &within.epoch_correct, error)
          || !meta_int (st, "epoch_counted", FALSE, 0, G_MAXINT64, &within.epoch_counted, NULL, error)
          || !meta_double (st, "epoch_seconds", &within.epoch_seconds, error))
        return FALSE;
    }
  pos->epoch = (int) epoch;
  pos->updates = updates;
  pos->seed = seed;
  pos->loss_scale = loss_scale;
  pos->skipped = skipped;
  pos->good_steps = (int) good;
  pos->bad_steps = (int) bad;
  pos->batch = within.batch;
  pos->epoch_loss = within.epoch_loss;
  pos->epoch_seen = within.epoch_seen;
  pos->epoch_correct = within.epoch_correct;
  pos->epoch_counted = within.epoch_counted;
  pos->epoch_seconds = within.epoch_seconds;
  return TRUE;
}

/* Everything the model holds must be there, fitting, and nothing else;
 * found[i] is the checkpoint's tensor for entries[i]. */
static gboolean
match_tensors (const NlSafetensors *st, GArray *entries, const NlStTensor **found, const char *optimizer,
               const char *what, GError **error)
{
  g_autoptr (GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < entries->len; i++)
    {
      const Entry *e = &g_array_index (entries, Entry, i);
      g_autofree char *problem = NULL;
      g_hash_table_add (names, e->name);
      found[i] = nl_safetensors_find (st, e->name);
      if (!found[i])
        return format_error (error, NL_CHECKPOINT_ERROR_MISMATCH, "the %s lacks tensor '%s'%s%s%s", what, e->name,
                             e->state ? " (it holds state of optimizer '" : "", e->state ? optimizer : "",
                             e->state ? "': prepare the model's optimizer the same way)" : "");
      problem = tensor_mismatch (e, found[i]);
      if (problem)
        return format_error (error, NL_CHECKPOINT_ERROR_MISMATCH, "%s tensor '%s' %s", what, e->name, problem);
    }
  for (int i = 0; i < nl_safetensors_n_tensors (st); i++)
    {
      const char *name = nl_safetensors_tensor (st, i)->name;
      if (!g_hash_table_contains (names, name))
        {
          gboolean state = g_str_has_prefix (name, NL_CHECKPOINT_STATE_PREFIX);
          return format_error (error, NL_CHECKPOINT_ERROR_MISMATCH, "%s tensor '%s' is not in the %s%s%s",
                               what, name, state ? "model's optimizer state (the checkpoint's optimizer is '" : "network",
                               state ? optimizer : "", state ? "': prepare the model's optimizer the same way)" : "");
        }
    }
  return TRUE;
}

gboolean
nl_checkpoint_load (NlModel *m, GBytes *blob, gboolean allow_other_network, NlTrainPosition *pos_out,
                    GError **error)
{
  g_autoptr (NlSafetensors) st = NULL;
  g_autoptr (GArray) entries = NULL;
  g_autofree const NlStTensor **found = NULL;
  const char *optimizer, *hash;
  NlTrainPosition read = { 0 };

  if (!nl_model_sync (m, error))
    return FALSE;
  st = nl_safetensors_parse (blob, error);
  if (!st)
    {
      g_prefix_error (error, "invalid checkpoint: ");
      return FALSE;
    }
  if (!read_position (st, &read, error))
    return FALSE;
  optimizer = nl_safetensors_metadata (st, "optimizer");
  if (!optimizer)
    return format_error (error, NL_CHECKPOINT_ERROR_FORMAT, "checkpoint metadata 'optimizer' is missing");
  hash = nl_safetensors_metadata (st, "network_hash");
  if (!hash)
    return format_error (error, NL_CHECKPOINT_ERROR_FORMAT, "checkpoint metadata 'network_hash' is missing");
  if (!allow_other_network)
    {
      g_autofree char *ours = nl_checkpoint_network_hash (m->net);
      if (strcmp (ours, hash) != 0)
        return format_error (error, NL_CHECKPOINT_ERROR_NETWORK,
                             "the checkpoint was saved from another network (network hash %.12s, this network's is "
                             "%.12s): nodes, parameters or edges differ",
                             hash, ours);
    }

  entries = model_entries (m, TRUE);
  found = g_new0 (const NlStTensor *, MAX (entries->len, 1));
  if (!match_tensors (st, entries, found, optimizer, "checkpoint", error))
    return FALSE;

  /* last: the checks above name a file that does not fit more precisely */
  if (!check_crc (st, blob, error))
    return FALSE;

  /* valid: nothing below fails (the sync above fetched what a GPU changed,
   * so the upload this marks carries no stale tensor) */
  for (guint i = 0; i < entries->len; i++)
    copy_in (&g_array_index (entries, Entry, i), found[i]);
  nl_model_host_changed (m);
  if (pos_out)
    {
      *pos_out = read;
      pos_out->optimizer = g_strdup (optimizer);
      pos_out->extra_json = g_strdup (nl_safetensors_metadata (st, "extra"));
    }
  return TRUE;
}

gboolean
nl_checkpoint_verify (GBytes *blob, GError **error)
{
  g_autoptr (NlSafetensors) st = nl_safetensors_parse (blob, error);
  if (!st)
    {
      g_prefix_error (error, "invalid checkpoint: ");
      return FALSE;
    }
  return check_format (st, NL_CHECKPOINT_FORMAT, error) && check_crc (st, blob, error);
}

/* ---- weights files ---- */

static void
set_weights_metadata (NlSafetensorsWriter *w, const char *hash)
{
  nl_safetensors_writer_set_metadata (w, "format", NL_WEIGHTS_FORMAT);
  /* weights files carry no checksum: still version 1 */
  nl_safetensors_writer_set_metadata (w, "version", "1");
  if (hash)
    nl_safetensors_writer_set_metadata (w, "network_hash", hash);
}

static gboolean
finish_to_file (NlSafetensorsWriter *w, const char *path, GError **error)
{
  g_autoptr (GBytes) bytes = nl_safetensors_writer_finish (w, error);
  return bytes && nl_safetensors_write_file (path, bytes, error);
}

gboolean
nl_weights_export (const NlModel *m, const char *path, GError **error)
{
  g_autoptr (NlSafetensorsWriter) w = nl_safetensors_writer_new ();
  g_autoptr (GArray) entries = NULL;
  g_autofree char *hash = NULL;

  if (!nl_model_sync ((NlModel *) m, error))
    return FALSE;
  entries = model_entries (m, FALSE);
  hash = nl_checkpoint_network_hash (m->net);
  set_weights_metadata (w, hash);
  add_entries (w, entries);
  return finish_to_file (w, path, error);
}

gboolean
nl_weights_export_from_checkpoint (GBytes *checkpoint, const char *path, GError **error)
{
  g_autoptr (NlSafetensorsWriter) w = nl_safetensors_writer_new ();
  g_autoptr (NlSafetensors) st = nl_safetensors_parse (checkpoint, error);

  if (!st)
    {
      g_prefix_error (error, "invalid checkpoint: ");
      return FALSE;
    }
  if (!check_format (st, NL_CHECKPOINT_FORMAT, error) || !check_crc (st, checkpoint, error))
    return FALSE;
  set_weights_metadata (w, nl_safetensors_metadata (st, "network_hash"));
  /* data-section order is the order they were saved in */
  for (int i = 0; i < nl_safetensors_n_tensors (st); i++)
    {
      const NlStTensor *t = nl_safetensors_tensor (st, i);
      if (!g_str_has_prefix (t->name, NL_CHECKPOINT_STATE_PREFIX))
        nl_safetensors_writer_add (w, t->name, t->dtype, t->ndim, t->shape, t->data);
    }
  return finish_to_file (w, path, error);
}

GBytes *
nl_weights_save_bytes (const NlModel *m, const char *const *metadata, GError **error)
{
  g_autoptr (NlSafetensorsWriter) w = nl_safetensors_writer_new ();
  g_autoptr (GArray) entries = NULL;
  g_autofree char *hash = NULL, *crc = NULL;

  if (!nl_model_sync ((NlModel *) m, error))
    return NULL;
  entries = model_entries (m, FALSE);
  hash = nl_checkpoint_network_hash (m->net);
  crc = entries_crc (entries);
  for (int i = 0; metadata && metadata[i] && metadata[i + 1]; i += 2)
    nl_safetensors_writer_set_metadata (w, metadata[i], metadata[i + 1]);
  nl_safetensors_writer_set_metadata (w, "network_hash", hash);
  nl_safetensors_writer_set_metadata (w, "crc32", crc);
  add_entries (w, entries);
  return nl_safetensors_writer_finish (w, error);
}

gboolean
nl_weights_load_parsed (NlModel *m, const NlSafetensors *st, GBytes *blob, const char *what, GError **error)
{
  g_autoptr (GArray) entries = NULL;
  g_autofree const NlStTensor **found = NULL;
  g_autofree char *ours = NULL;
  const char *hash = nl_safetensors_metadata (st, "network_hash");

  if (!nl_model_sync (m, error))
    return FALSE;
  if (!hash)
    return format_error (error, NL_CHECKPOINT_ERROR_FORMAT, "%s metadata 'network_hash' is missing", what);
  ours = nl_checkpoint_network_hash (m->net);
  if (strcmp (ours, hash) != 0)
    return format_error (error, NL_CHECKPOINT_ERROR_NETWORK,
                         "the %s was saved from another network (network hash %.12s, this network's is %.12s)", what,
                         hash, ours);
  entries = model_entries (m, FALSE);
  found = g_new0 (const NlStTensor *, MAX (entries->len, 1));
  if (!match_tensors (st, entries, found, "", what, error) || !data_crc_matches (st, blob, error))
    return FALSE;
  for (guint i = 0; i < entries->len; i++)
    copy_in (&g_array_index (entries, Entry, i), found[i]);
  nl_model_host_changed (m);
  return TRUE;
}

/* "'a', 'b', 'c' and 4 more" */
static char *
list_names (GPtrArray *names)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < names->len && i < 5; i++)
    g_string_append_printf (s, "%s'%s'", i ? ", " : "", (const char *) names->pdata[i]);
  if (names->len > 5)
    g_string_append_printf (s, " and %u more", names->len - 5);
  return g_string_free (s, FALSE);
}

gboolean
nl_weights_import (NlModel *m, const char *path, gboolean allow_missing, gboolean ignore_extra, GPtrArray *missing,
                   GPtrArray *extra, GError **error)
{
  g_autoptr (NlSafetensors) st = NULL;
  g_autoptr (GArray) entries = NULL;
  g_autoptr (GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) miss = g_ptr_array_new ();  /* borrowed names */
  g_autoptr (GPtrArray) more = g_ptr_array_new ();
  g_autofree const NlStTensor **found = NULL;
  g_autofree char *problem = NULL;
  const char *problem_name = NULL;

  if (!nl_model_sync (m, error))
    return FALSE;
  st = nl_safetensors_read_file (path, error);
  if (!st)
    return FALSE;
  entries = model_entries (m, FALSE);
  found = g_new0 (const NlStTensor *, MAX (entries->len, 1));
  for (guint i = 0; i < entries->len; i++)
    {
      const Entry *e = &g_array_index (entries, Entry, i);
      g_hash_table_add (names, e->name);
      found[i] = nl_safetensors_find (st, e->name);
      if (!found[i])
        g_ptr_array_add (miss, e->name);
      else if (!problem)
        {
          problem = tensor_mismatch (e, found[i]);
          problem_name = e->name;
        }
    }
  for (int i = 0; i < nl_safetensors_n_tensors (st); i++)
    if (!g_hash_table_contains (names, nl_safetensors_tensor (st, i)->name))
      g_ptr_array_add (more, nl_safetensors_tensor (st, i)->name);
  for (guint i = 0; missing && i < miss->len; i++)
    g_ptr_array_add (missing, g_strdup (miss->pdata[i]));
  for (guint i = 0; extra && i < more->len; i++)
    g_ptr_array_add (extra, g_strdup (more->pdata[i]));

  if (problem)
    return format_error (error, NL_CHECKPOINT_ERROR_MISMATCH, "%s: tensor '%s' %s", path, problem_name, problem);
  if (miss->len && !allow_missing)
    {
      g_autofree char *list = list_names (miss);
      return format_error (error, NL_CHECKPOINT_ERROR_MISMATCH,
                           "%s lacks %u tensor%s the network needs: %s (allow missing to load the rest)", path,
                           miss->len, miss->len == 1 ? "" : "s", list);
    }
  if (more->len && !ignore_extra)
    {
      g_autofree char *list = list_names (more);
      return format_error (error, NL_CHECKPOINT_ERROR_MISMATCH,
                           "%s holds %u tensor%s not in the network: %s (ignore extra to load anyway)", path,
                           more->len, more->len == 1 ? "" : "s", list);
    }
  for (guint i = 0; i < entries->len; i++)
    if (found[i])
      copy_in (&g_array_index (entries, Entry, i), found[i]);
  nl_model_host_changed (m);
  return TRUE;
}
