/* nl-data-preview.c — the transform catalogue, pipeline options and the
 * Data page's preview (see nl-data-preview.h). */
#include "engine/session/nl-data-preview.h"
#include <glib/gi18n.h>
#include "core/nl-json-guard.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/data/nl-dataset.h"
#include "engine/data/nl-dataset-kind.h"
#include "engine/data/nl-text-dataset.h"
#include "engine/data/nl-transform.h"
#include "engine/session/nl-seq-preview.h"

/* ---- the transform catalogue, from what nl-transform.c's parser accepts ---- */

#define SIZE_PARAM(doc) { "size", N_("Size"), NL_TRANSFORM_PARAM_SIZE, 1, 16384, 1, 0, "28", FALSE, doc }
#define AMOUNT_PARAM(doc) { "amount", N_("Amount"), NL_TRANSFORM_PARAM_DOUBLE, 0, 1, 0.05, 2, "0.2", FALSE, doc }

static const NlTransformSpecInfo transforms[] = {
  { "random-crop", N_("Random crop"), N_("Pad every side, then crop at a random offset"), 2,
    { SIZE_PARAM (N_("Crop size: N or WxH")),
      { "padding", N_("Padding"), NL_TRANSFORM_PARAM_INT, 0, 1024, 1, 0, "4", TRUE,
        N_("Zero pixels added on every side") } } },
  { "center-crop", N_("Center crop"), N_("Crop from the centre"), 1, { SIZE_PARAM (N_("Crop size: N or WxH")) } },
  { "resize", N_("Resize"), N_("Bilinear resize"), 1, { SIZE_PARAM (N_("New size: N or WxH")) } },
  { "flip", N_("Flip"), N_("Mirror left-right with probability 0.5"), 0, { { NULL } } },
  { "brightness", N_("Brightness"), N_("Multiply by 1 + u, u uniform in [-amount, amount]"), 1,
    { AMOUNT_PARAM (N_("Largest relative change")) } },
  { "contrast", N_("Contrast"), N_("Scale the distance from the image mean by 1 + u"), 1,
    { AMOUNT_PARAM (N_("Largest relative change")) } },
  { "normalize", N_("Normalize"), N_("(x - mean) / std per channel"), 2,
    { { "mean", N_("Mean"), NL_TRANSFORM_PARAM_VALUES, 0, 0, 0, 0, "0.5", FALSE,
        N_("One value, or one per channel: 0.49/0.48/0.45") },
      { "std", N_("Std"), NL_TRANSFORM_PARAM_VALUES, 0, 0, 0, 0, "0.5", FALSE,
        N_("Positive; one value, or one per channel") } } },
  { "to-tensor", N_("To tensor"), N_("No-op: samples are already float CHW in [0, 1]"), 0, { { NULL } } },
};

const NlTransformSpecInfo *
nl_data_transforms (int *n)
{
  if (n)
    *n = G_N_ELEMENTS (transforms);
  return transforms;
}

const NlTransformSpecInfo *
nl_data_transform_lookup (const char *name)
{
  for (guint i = 0; name && i < G_N_ELEMENTS (transforms); i++)
    if (strcmp (transforms[i].name, name) == 0)
      return &transforms[i];
  return NULL;
}

NlTransformStep *
nl_transform_step_new (const NlTransformSpecInfo *info, const NlShape *sample_shape)
{
  NlTransformStep *step;
  g_return_val_if_fail (info != NULL, NULL);
  step = g_new0 (NlTransformStep, 1);
  step->info = info;
  for (int i = 0; i < info->n_params; i++)
    {
      const NlTransformParamInfo *pi = &info->params[i];
      if (pi->type == NL_TRANSFORM_PARAM_SIZE && sample_shape && sample_shape->ndim >= 2)
        {
          int64_t h = sample_shape->d[sample_shape->ndim - 2], w = sample_shape->d[sample_shape->ndim - 1];
          step->values[i] = w == h ? g_strdup_printf ("%" G_GINT64_FORMAT, w)
                                   : g_strdup_printf ("%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT, w, h);
        }
      else
        step->values[i] = g_strdup (pi->default_value);
    }
  return step;
}

void
nl_transform_step_free (NlTransformStep *step)
{
  if (!step)
    return;
  for (int i = 0; i < NL_TRANSFORM_MAX_PARAMS; i++)
    g_free (step->values[i]);
  g_free (step);
}

char *
nl_transform_step_to_string (const NlTransformStep *step)
{
  GString *s;
  int last;
  g_return_val_if_fail (step != NULL && step->info != NULL, NULL);
  s = g_string_new (step->info->name);
  /* optional parameters left empty are dropped from the end */
  last = step->info->n_params;
  while (last > 0 && step->info->params[last - 1].optional && (!step->values[last - 1] || !*step->values[last - 1]))
    last--;
  for (int i = 0; i < last; i++)
    g_string_append_printf (s, ":%s", step->values[i] ? step->values[i] : "");
  return g_string_free (s, FALSE);
}

char *
nl_transform_spec_problem (const char *spec)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTransform) t = nl_transform_parse (spec ? spec : "", &error);
  return t ? NULL : g_strdup (error->message);
}

GPtrArray *
nl_transform_steps_parse (const char *spec, GError **error)
{
  g_autoptr (GPtrArray) steps = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_transform_step_free);
  g_autoptr (NlTransform) t = NULL;
  g_auto (GStrv) items = NULL;
  g_autofree char *stripped = g_strstrip (g_strdup (spec ? spec : ""));

  if (!*stripped)
    return g_steal_pointer (&steps);
  /* the parser has the good messages; after it, every item is well formed */
  if (!(t = nl_transform_parse (spec, error)))
    return NULL;
  items = g_strsplit (spec, ",", -1);
  for (int k = 0; items[k]; k++)
    {
      g_auto (GStrv) parts = g_strsplit (g_strstrip (items[k]), ":", -1);
      const NlTransformSpecInfo *info = nl_data_transform_lookup (parts[0]);
      NlTransformStep *step;
      if (!info)
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC, "bad transform '%s': not in the catalogue", items[k]);
          return NULL;
        }
      step = g_new0 (NlTransformStep, 1);
      step->info = info;
      for (int i = 0; i < info->n_params; i++)
        step->values[i] = g_strdup (parts[0] && i + 1 < (int) g_strv_length (parts) ? parts[i + 1] : "");
      g_ptr_array_add (steps, step);
    }
  return g_steal_pointer (&steps);
}

char *
nl_transform_steps_to_spec (GPtrArray *steps)
{
  GString *s = g_string_new (NULL);
  g_return_val_if_fail (steps != NULL, g_string_free (s, FALSE));
  for (guint i = 0; i < steps->len; i++)
    {
      g_autofree char *item = nl_transform_step_to_string (steps->pdata[i]);
      g_string_append_printf (s, "%s%s", i ? "," : "", item);
    }
  return g_string_free (s, FALSE);
}

/* ---- pipeline options in extra_json ---- */

static void
extra_defaults (NlPipelineExtra *x)
{
  memset (x, 0, sizeof *x);
  x->shuffle = TRUE;
}

void
nl_pipeline_extra_clear (NlPipelineExtra *x)
{
  if (!x)
    return;
  g_clear_pointer (&x->label_column, g_free);
  g_clear_pointer (&x->text_column, g_free);
  g_clear_pointer (&x->target_column, g_free);
}

void
nl_pipeline_extra_to_options (const NlPipelineExtra *x, double val_fraction, NlDatasetOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->label_column = x->label_column;
  opts->regression = x->regression;
  opts->image_width = x->image_width;
  opts->image_height = x->image_height;
  opts->val_fraction = val_fraction;
  opts->text_column = x->text_column;
  opts->tokenizer = x->tokenizer;
  opts->vocab_size = x->vocab_size;
  opts->min_count = x->min_count;
  opts->max_length = x->max_length;
  opts->target_column = x->target_column;
  opts->window = x->window;
  opts->horizon = x->horizon;
}

/* The text and series members (type-checked by the caller). */
static gboolean
parse_sequence_members (JsonObject *o, NlPipelineExtra *x, GError **error)
{
  const char *tok = json_object_get_string_member_with_default (o, "tokenizer", NULL);
  if (!nl_tokenizer_kind_parse (tok, &x->tokenizer))
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID,
                   "the pipeline's extra option 'tokenizer' should be \"word\" or \"char\", not '%s'", tok);
      return FALSE;
    }
  x->text_column = g_strdup (json_object_get_string_member_with_default (o, "text_column", NULL));
  x->target_column = g_strdup (json_object_get_string_member_with_default (o, "target", NULL));
  x->vocab_size = (int) CLAMP (json_object_get_int_member_with_default (o, "vocab_size", 0), 0, G_MAXINT);
  x->min_count = (int) CLAMP (json_object_get_int_member_with_default (o, "min_count", 0), 0, G_MAXINT);
  x->max_length = (int) CLAMP (json_object_get_int_member_with_default (o, "max_length", 0), 0, G_MAXINT);
  x->window = (int) CLAMP (json_object_get_int_member_with_default (o, "window", 0), 0, G_MAXINT);
  x->horizon = (int) CLAMP (json_object_get_int_member_with_default (o, "horizon", 0), 0, G_MAXINT);
  return TRUE;
}

static gboolean
member_type_ok (JsonObject *o, const char *name, GType type, GError **error)
{
  JsonNode *n = json_object_get_member (o, name);
  if (!n || JSON_NODE_HOLDS_NULL (n))
    return TRUE;
  if (JSON_NODE_HOLDS_VALUE (n) && (json_node_get_value_type (n) == type
                                    || (type == G_TYPE_INT64 && json_node_get_value_type (n) == G_TYPE_DOUBLE)))
    return TRUE;
  g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, "the pipeline's extra option '%s' should be %s",
               name, type == G_TYPE_BOOLEAN ? "true or false" : type == G_TYPE_STRING ? "text" : "a number");
  return FALSE;
}

gboolean
nl_pipeline_extra_parse (const char *json, NlPipelineExtra *x, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;
  JsonNode *lc;

  g_return_val_if_fail (x != NULL, FALSE);
  extra_defaults (x);
  if (!json || !*json)
    return TRUE;
  if (!nl_json_check_depth (json, -1, "the pipeline's extra options", error)
      || !json_parser_load_from_data (parser, json, -1, error))
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, "the pipeline's extra options are not a JSON object");
      return FALSE;
    }
  o = json_node_get_object (json_parser_get_root (parser));
  if (!member_type_ok (o, "shuffle", G_TYPE_BOOLEAN, error) || !member_type_ok (o, "regression", G_TYPE_BOOLEAN, error)
      || !member_type_ok (o, "image_width", G_TYPE_INT64, error)
      || !member_type_ok (o, "image_height", G_TYPE_INT64, error))
    return FALSE;
  static const char *const strings[] = { "text_column", "tokenizer", "target" };
  static const char *const ints[] = { "vocab_size", "min_count", "max_length", "window", "horizon" };
  for (guint k = 0; k < G_N_ELEMENTS (strings); k++)
    if (!member_type_ok (o, strings[k], G_TYPE_STRING, error))
      return FALSE;
  for (guint k = 0; k < G_N_ELEMENTS (ints); k++)
    if (!member_type_ok (o, ints[k], G_TYPE_INT64, error))
      return FALSE;
  if (!parse_sequence_members (o, x, error))
    {
      nl_pipeline_extra_clear (x);
      extra_defaults (x);
      return FALSE;
    }
  x->shuffle = json_object_get_boolean_member_with_default (o, "shuffle", TRUE);
  x->regression = json_object_get_boolean_member_with_default (o, "regression", FALSE);
  x->image_width = (int) json_object_get_int_member_with_default (o, "image_width", 0);
  x->image_height = (int) json_object_get_int_member_with_default (o, "image_height", 0);
  /* a column index may be written as a number */
  lc = json_object_get_member (o, "label_column");
  if (lc && JSON_NODE_HOLDS_VALUE (lc) && json_node_get_value_type (lc) == G_TYPE_STRING)
    x->label_column = g_strdup (json_node_get_string (lc));
  else if (lc && JSON_NODE_HOLDS_VALUE (lc) && json_node_get_value_type (lc) == G_TYPE_INT64)
    x->label_column = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (lc));
  else if (lc && !JSON_NODE_HOLDS_NULL (lc))
    return member_type_ok (o, "label_column", G_TYPE_STRING, error);
  return TRUE;
}

char *
nl_pipeline_extra_to_json (const NlPipelineExtra *x, const char *base_json)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  JsonObject *o;

  g_return_val_if_fail (x != NULL, NULL);
  if (base_json && *base_json && nl_json_check_depth (base_json, -1, "the pipeline's extra options", NULL)
      && json_parser_load_from_data (parser, base_json, -1, NULL)
      && JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    root = json_node_copy (json_parser_get_root (parser));
  else
    root = json_node_init_object (json_node_alloc (), json_object_new ());
  o = json_node_get_object (root);
  json_object_set_boolean_member (o, "shuffle", x->shuffle);
  if (x->label_column && *x->label_column)
    json_object_set_string_member (o, "label_column", x->label_column);
  else
    json_object_remove_member (o, "label_column");
#define SET_OR_REMOVE(cond, name, setter, value) \
  if (cond)                                     \
    setter (o, name, value);                    \
  else                                          \
    json_object_remove_member (o, name)
  SET_OR_REMOVE (x->regression, "regression", json_object_set_boolean_member, TRUE);
  SET_OR_REMOVE (x->image_width > 0, "image_width", json_object_set_int_member, x->image_width);
  SET_OR_REMOVE (x->image_height > 0, "image_height", json_object_set_int_member, x->image_height);
  SET_OR_REMOVE (x->text_column && *x->text_column, "text_column", json_object_set_string_member, x->text_column);
  SET_OR_REMOVE (x->tokenizer != NL_TOKENIZER_WORD, "tokenizer", json_object_set_string_member,
                 nl_tokenizer_kind_name (x->tokenizer));
  SET_OR_REMOVE (x->vocab_size > 0, "vocab_size", json_object_set_int_member, x->vocab_size);
  SET_OR_REMOVE (x->min_count > 0, "min_count", json_object_set_int_member, x->min_count);
  SET_OR_REMOVE (x->max_length > 0, "max_length", json_object_set_int_member, x->max_length);
  SET_OR_REMOVE (x->target_column && *x->target_column, "target", json_object_set_string_member, x->target_column);
  SET_OR_REMOVE (x->window > 0, "window", json_object_set_int_member, x->window);
  SET_OR_REMOVE (x->horizon > 0, "horizon", json_object_set_int_member, x->horizon);
#undef SET_OR_REMOVE
  json_generator_set_root (gen, root);
  return nl_json_fix_numbers (json_generator_to_data (gen, NULL));
}

/* ---- an open dataset with its histogram, shared by successive previews ---- */

struct NlDataSource {
  gint ref_count;
  char *key;          /* spec and options: previews with the same key share it */
  NlDataset *ds;
  int n_classes;
  char **class_names; /* n_classes, never NULL entries */
  int64_t *counts;
  double seconds;     /* opening and counting */
};

static void
source_unref (NlDataSource *s)
{
  if (!s || !g_atomic_int_dec_and_test (&s->ref_count))
    return;
  g_free (s->key);
  nl_dataset_free (s->ds);
  g_strfreev (s->class_names);
  g_free (s->counts);
  g_free (s);
}

/* Counts labels over the training side: by the kind's own count when it
 * has one (image folders: from the listing), from memory for IDX / CIFAR,
 * else by reading every sample. */
static gboolean
count_classes (NlDataSource *s, const char *spec, double val_fraction, GCancellable *cancellable, GError **error)
{
  NlDataset *ds = s->ds;
  g_autofree char *path = NULL;
  g_autofree float *buf = NULL;
  g_autofree guint8 *buf8 = NULL;
  const NlDatasetKind *kind = nl_dataset_kind_lookup (spec, &path);
  const char *where = path ? path : kind ? kind->default_path : NULL;
  int64_t per = nl_dataset_label_numel (ds); /* per-step labels: every step counts */
  g_autofree float *label = g_new (float, per);

  s->counts = g_new0 (int64_t, s->n_classes);
  if (kind && kind->count_labels && where
      && kind->count_labels (where, val_fraction, s->n_classes, ds->length, s->counts))
    return TRUE;
  memset (s->counts, 0, sizeof (int64_t) * s->n_classes);
  if (!ds->klass->get_u8)
    {
      if (ds->klass->read_u8)
        buf8 = g_new (guint8, MAX (nl_shape_numel (&ds->sample_shape), 1));
      else
        buf = g_new (float, MAX (nl_shape_numel (&ds->sample_shape), 1));
    }
  for (int64_t i = 0; i < ds->length; i++)
    {
      for (int64_t k = 0; k < per; k++)
        label[k] = -1;
      if ((i & 1023) == 0 && g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      if (ds->klass->get_u8)
        ds->klass->get_u8 (ds, i, label);
      else if (buf8 ? !ds->klass->read_u8 (ds, i, buf8, label, error) : !nl_dataset_get (ds, i, buf, label, error))
        return FALSE;
      for (int64_t k = 0; k < per; k++)
        if (label[k] >= 0 && label[k] < s->n_classes)
          s->counts[(int) label[k]]++;
    }
  return TRUE;
}

static NlDataSource *
source_open (const char *spec, const NlDatasetOptions *opts, const char *key, GCancellable *cancellable,
             GError **error)
{
  gint64 t0 = g_get_monotonic_time ();
  NlDataSource *s = g_new0 (NlDataSource, 1);
  s->ref_count = 1;
  s->key = g_strdup (key);
  if (!(s->ds = nl_dataset_open_full (spec, TRUE, opts, error)))
    {
      source_unref (s);
      return NULL;
    }
  /* per-step labels (a language model's next tokens) have no class histogram */
  s->n_classes = s->ds->label_shape.ndim > 0 ? 0 : MAX (s->ds->n_classes, 0);
  if (s->n_classes > 0)
    {
      s->class_names = g_new0 (char *, s->n_classes + 1);
      for (int c = 0; c < s->n_classes; c++)
        {
          gboolean have = s->ds->class_names && (int) g_strv_length (s->ds->class_names) > c;
          s->class_names[c] = have ? g_strdup (s->ds->class_names[c]) : g_strdup_printf ("%d", c);
        }
      if (!count_classes (s, spec, opts->val_fraction, cancellable, error))
        {
          source_unref (s);
          return NULL;
        }
    }
  s->seconds = (g_get_monotonic_time () - t0) / 1e6;
  return s;
}

/* ---- previews ---- */

static guint64
mix64 (guint64 *state)
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static int
compare_i64 (const void *a, const void *b)
{
  int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
  return (x > y) - (x < y);
}

/* n distinct indices of [0, len) chosen by seed (Floyd's algorithm), ascending. */
static int64_t *
choose_indices (int64_t len, int n, guint64 seed)
{
  int64_t *idx = g_new (int64_t, MAX (n, 1));
  g_autoptr (GHashTable) taken = g_hash_table_new (g_int64_hash, g_int64_equal);
  guint64 state = seed ^ G_GUINT64_CONSTANT (0x70726576696577); /* "preview" */
  int k = 0;
  if (n >= len)
    {
      for (int64_t i = 0; i < len; i++)
        idx[i] = i;
      return idx;
    }
  for (int64_t j = len - n; j < len; j++)
    {
      int64_t t = (int64_t) (mix64 (&state) % (guint64) (j + 1));
      idx[k] = g_hash_table_contains (taken, &t) ? j : t;
      g_hash_table_add (taken, &idx[k]);
      k++;
    }
  qsort (idx, n, sizeof *idx, compare_i64);
  return idx;
}

static void
rescale (NlDataPreview *p, gboolean linear)
{
  gsize n = (gsize) p->n_samples * nl_shape_numel (&p->shape);
  float lo = INFINITY, hi = -INFINITY;
  for (gsize i = 0; i < n; i++)
    if (isfinite (p->samples[i]))
      {
        lo = MIN (lo, p->samples[i]);
        hi = MAX (hi, p->samples[i]);
      }
  p->value_min = isfinite (lo) ? lo : 0;
  p->value_max = isfinite (hi) ? hi : 0;
  for (gsize i = 0; i < n; i++)
    {
      float v = p->samples[i];
      if (!isfinite (v))
        v = 0;
      else if (linear)
        v = hi > lo ? (v - lo) / (hi - lo) : 0.5f;
      p->samples[i] = CLAMP (v, 0.0f, 1.0f);
    }
}

NlDataPreview *
nl_data_preview_ref (NlDataPreview *p)
{
  g_return_val_if_fail (p != NULL, NULL);
  g_atomic_int_inc (&p->ref_count);
  return p;
}

void
nl_data_preview_unref (NlDataPreview *p)
{
  if (!p || !g_atomic_int_dec_and_test (&p->ref_count))
    return;
  g_free (p->spec);
  g_free (p->description);
  g_strfreev (p->class_names);
  g_free (p->class_counts);
  g_free (p->transforms);
  g_free (p->indices);
  g_free (p->labels);
  g_free (p->samples);
  nl_text_preview_free (p->text);
  nl_series_preview_free (p->series);
  source_unref (p->source);
  g_free (p);
}

static gboolean
fill_samples (NlDataPreview *p, NlDataset *ds, const NlTransform *t, guint64 seed, GCancellable *cancellable,
              GError **error)
{
  int64_t in_numel = nl_shape_numel (&ds->sample_shape), out_numel = nl_shape_numel (&p->shape);
  g_autofree float *in = g_new (float, MAX (in_numel, 1));
  g_autofree float *scratch = NULL, *label = g_new (float, nl_dataset_label_numel (ds));
  gboolean identity = nl_transform_is_identity (t);

  if (!identity)
    scratch = g_new (float, MAX (nl_transform_scratch_size (t, &ds->sample_shape), 1));
  for (int i = 0; i < p->n_samples; i++)
    {
      float *out = p->samples + (gsize) i * out_numel;
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      /* a per-step label shows its first step */
      if (!nl_dataset_get (ds, p->indices[i], identity ? out : in, label, error))
        return FALSE;
      p->labels[i] = label[0];
      if (!identity)
        nl_transform_apply (t, in, &ds->sample_shape, out, seed, 0, p->indices[i], scratch);
    }
  return TRUE;
}

NlDataPreview *
nl_data_preview_load (const NlPipelineInfo *pl, int n_samples, guint64 seed, NlDataPreview *previous,
                      GCancellable *cancellable, GError **error)
{
  gint64 t0 = g_get_monotonic_time ();
  NlPipelineExtra extra;
  NlDatasetOptions opts = { 0 };
  g_autoptr (NlTransform) t = NULL;
  g_autoptr (NlDataPreview) p = NULL;
  g_autofree char *key = NULL;
  NlDataSource *source;
  NlDataset *ds;
  const NlDatasetKind *kind;
  gboolean uses_split;
  char buf[64];

  g_return_val_if_fail (pl != NULL && n_samples >= 0, NULL);
  if (!nl_pipeline_extra_parse (pl->extra_json, &extra, error))
    return NULL;
  kind = nl_dataset_kind_lookup (pl->dataset_spec, NULL);
  uses_split = kind && (kind->uses & NL_DATASET_USES_SPLIT);
  nl_pipeline_extra_to_options (&extra, uses_split ? pl->split : 0, &opts);
  key = g_strdup_printf ("%s\n%.17g\n%s\n%d\n%dx%d\n%s\n%d:%d:%d:%d\n%s\n%d:%d",
                         pl->dataset_spec ? pl->dataset_spec : "", opts.val_fraction,
                         extra.label_column ? extra.label_column : "", extra.regression, extra.image_width,
                         extra.image_height, extra.text_column ? extra.text_column : "", extra.tokenizer,
                         extra.vocab_size, extra.min_count, extra.max_length,
                         extra.target_column ? extra.target_column : "", extra.window, extra.horizon);

  if (!(t = nl_transform_parse (pl->transforms ? pl->transforms : "", error)))
    goto fail;
  if (previous && previous->source && strcmp (previous->source->key, key) == 0)
    {
      source = previous->source;
      g_atomic_int_inc (&source->ref_count);
    }
  else if (!(source = source_open (pl->dataset_spec, &opts, key, cancellable, error)))
    goto fail;

  ds = source->ds;
  p = g_new0 (NlDataPreview, 1);
  p->ref_count = 1;
  p->source = source;
  p->spec = g_strdup (pl->dataset_spec);
  p->description = g_strdup (ds->description);
  p->has_test_set = kind && !uses_split;
  p->length = ds->length;
  p->sample_shape = ds->sample_shape;
  p->transforms = g_strdup (nl_transform_describe (t));
  p->n_classes = source->n_classes;
  if (p->n_classes > 0)
    {
      p->class_names = g_strdupv (source->class_names);
      p->class_counts = g_memdup2 (source->counts, sizeof (int64_t) * p->n_classes);
    }
  if (nl_transform_is_identity (t))
    p->shape = ds->sample_shape;
  else
    {
      g_autoptr (GError) why = NULL;
      if (!nl_transform_check (t, &ds->sample_shape, &why))
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC, "the transforms do not fit samples of shape %s: %s",
                       nl_shape_format (&ds->sample_shape, buf, sizeof buf), why->message);
          goto fail;
        }
      p->shape = nl_transform_output_shape (t, &ds->sample_shape);
    }
  p->n_samples = (int) MIN ((int64_t) n_samples, ds->length);
  p->indices = choose_indices (ds->length, p->n_samples, seed);
  p->labels = g_new0 (float, MAX (p->n_samples, 1));
  p->samples = g_new0 (float, MAX ((gsize) p->n_samples * nl_shape_numel (&p->shape), 1));
  if (!fill_samples (p, ds, t, seed, cancellable, error))
    goto fail;
  rescale (p, nl_transform_has_normalize (t) || p->shape.ndim < 2);
  p->series = nl_series_preview_build (ds);
  if (nl_text_dataset_is (ds) && !(p->text = nl_text_preview_build (ds, p->indices, p->n_samples, cancellable, error)))
    goto fail;
  p->seconds = (g_get_monotonic_time () - t0) / 1e6;
  nl_pipeline_extra_clear (&extra);
  return g_steal_pointer (&p);

fail:
  nl_pipeline_extra_clear (&extra);
  return NULL;
}

char *
nl_data_preview_label_text (const NlDataPreview *p, int i)
{
  int c;
  g_return_val_if_fail (p != NULL && i >= 0 && i < p->n_samples, NULL);
  if (p->n_classes == 0)
    return g_strdup_printf ("%.4g", p->labels[i]);
  c = (int) p->labels[i];
  if (c >= 0 && c < p->n_classes)
    return g_strdup (p->class_names[c]);
  return g_strdup_printf ("%d", c);
}

const float *
nl_data_preview_sample (const NlDataPreview *p, int i)
{
  g_return_val_if_fail (p != NULL && i >= 0 && i < p->n_samples, NULL);
  return p->samples + (gsize) i * nl_shape_numel (&p->shape);
}

char *
nl_data_format_count (int64_t v)
{
  g_autofree char *digits = g_strdup_printf ("%" G_GUINT64_FORMAT, v < 0 ? -(guint64) v : (guint64) v);
  GString *s = g_string_new (v < 0 ? "-" : "");
  int len = (int) strlen (digits);
  for (int i = 0; i < len; i++)
    {
      if (i > 0 && (len - i) % 3 == 0)
        g_string_append_c (s, ',');
      g_string_append_c (s, digits[i]);
    }
  return g_string_free (s, FALSE);
}
