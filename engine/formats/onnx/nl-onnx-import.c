/* nl-onnx-import.c — ONNX ModelProto -> NlNetwork + weights (see
 * nl-onnx-import.h). Nodes are visited in the graph's (topological) order;
 * each either folds into a constant, aliases a value (Identity), or becomes
 * netloom nodes (nl-onnx-map.c). Nodes that cannot be mapped are collected
 * and reported together; nothing is returned then. */
#include "engine/formats/onnx/nl-onnx-import-private.h"
#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/formats/onnx/nl-onnx-fold.h"

#include <string.h>

/* ---- the graph ---- */

static NlOnnxResult
map_node (NlOnnxImp *im, const Onnx__NodeProto *n, GError **error)
{
  gboolean all_const = TRUE, any = FALSE;
  if (n->domain && *n->domain && strcmp (n->domain, "ai.onnx") != 0)
    return nl_onnx_imp_unsupported (im, "domain %s", n->domain);
  if (!n->op_type)
    return nl_onnx_imp_unsupported (im, "no op_type");
  if (g_hash_table_contains (im->absorbed, n))
    return NL_ONNX_MAPPED;
  /* downstream of an unsupported node: reported there, not again here,
   * unless netloom has nothing for this op either */
  for (size_t k = 0; k < n->n_input; k++)
    if (g_hash_table_contains (im->poisoned, nl_onnx_in_name (n, k)))
      {
        if (!strcmp (n->op_type, "Identity") || nl_onnx_map_has_op (n->op_type))
          return NL_ONNX_SKIPPED;
        return nl_onnx_imp_unsupported (im, "no netloom op for it");
      }
  for (size_t k = 0; k < n->n_input; k++)
    if (*nl_onnx_in_name (n, k))
      {
        any = TRUE;
        all_const = all_const && nl_onnx_imp_const (im, nl_onnx_in_name (n, k));
      }
  if (!strcmp (n->op_type, "Identity") && nl_onnx_imp_data (im, nl_onnx_in_name (n, 0)) >= 0)
    {
      nl_onnx_imp_produce (im, n, nl_onnx_imp_data (im, nl_onnx_in_name (n, 0)));
      return NL_ONNX_MAPPED;
    }
  if (all_const && (any || !strcmp (n->op_type, "Constant")))
    {
      NlOnnxConst *in[NL_ONNX_FOLD_MAX_INPUTS] = { NULL };
      NlOnnxConst *out;
      g_autofree char *why = NULL;
      if (n->n_input > NL_ONNX_FOLD_MAX_INPUTS)
        return nl_onnx_imp_unsupported (im, "too many constant inputs to fold");
      for (size_t k = 0; k < n->n_input; k++)
        in[k] = nl_onnx_imp_const (im, nl_onnx_in_name (n, k));
      out = nl_onnx_fold (n, in, (int) n->n_input, &why, error);
      if (!out)
        return why ? nl_onnx_imp_unsupported (im, "%s", why) : NL_ONNX_FAILED;
      if (n->n_output > 0 && n->output[0])
        g_hash_table_insert (im->consts, g_strdup (n->output[0]), out);
      else
        nl_onnx_const_free (out);
      return NL_ONNX_MAPPED;
    }
  return nl_onnx_map_op (im, n);
}

/* The one graph input that is no initializer: the Input node. */
static gboolean
map_input (NlOnnxImp *im, GString *problems, int *n_problems)
{
  const Onnx__ValueInfoProto *found = NULL;
  const Onnx__TensorShapeProto *shape;
  NlShape s = { 0 };
  int node = -1;
  gboolean time_major;
  for (size_t k = 0; k < im->g->n_input; k++)
    {
      const Onnx__ValueInfoProto *v = im->g->input[k];
      if (!v->name || nl_onnx_imp_const (im, v->name))
        continue;
      if (found)
        {
          g_string_append_printf (problems, "\n  graph input “%s”: netloom networks take one input", v->name);
          (*n_problems)++;
          continue;
        }
      found = v;
    }
  if (!found)
    {
      g_string_append (problems, "\n  the graph has no input that is not a constant");
      (*n_problems)++;
      return FALSE;
    }
  shape = found->type && found->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE
            ? found->type->tensor_type->shape : NULL;
  if (!shape || shape->n_dim < 1 || shape->n_dim > NL_MAX_DIMS)
    {
      g_string_append_printf (problems, "\n  graph input “%s” has no shape with a batch dimension", found->name);
      (*n_problems)++;
      return FALSE;
    }
  /* a time-major (T, N, C) input read by an LSTM/GRU directly is read batch-first */
  time_major = shape->n_dim == 3 && nl_onnx_map_seq_time_major_input (im, found->name);
  im->batch = shape->dim[time_major]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                ? shape->dim[time_major]->dim_value : -1;
  s.ndim = (int) shape->n_dim - 1;
  for (size_t d = 1; d < shape->n_dim; d++)
    {
      size_t from = time_major && d == 1 ? 0 : d;
      if (shape->dim[from]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
          || shape->dim[from]->dim_value < 1)
        {
          g_string_append_printf (problems, "\n  graph input “%s”: dimension %zu has no fixed size", found->name, from);
          (*n_problems)++;
          return FALSE;
        }
      s.d[d - 1] = shape->dim[from]->dim_value;
    }
  im->imp->sample = s;
  node = nl_network_add_node (im->imp->net, "data", "Input", NULL);
  {
    g_autoptr (GString) text = g_string_new ("[");
    for (int d = 0; d < s.ndim; d++)
      g_string_append_printf (text, "%s%" G_GINT64_FORMAT, d ? "," : "", s.d[d]);
    g_string_append_c (text, ']');
    if (s.ndim > 0)
      nl_network_set_param (im->imp->net, node, "shape", text->str, NULL);
  }
  if (time_major)
    {
      nl_onnx_map_seq_input_view (im, found->name, node);
      g_hash_table_insert (im->imp->meta, g_strdup ("netloom.input_layout"),
                           g_strdup ("batch-first: the model's time-major (T, N, C) input is read as (N, T, C)"));
      return TRUE;
    }
  g_hash_table_insert (im->values, g_strdup (found->name), GINT_TO_POINTER (node + 1));
  return TRUE;
}

void
nl_onnx_import_free (NlOnnxImport *imp)
{
  if (!imp)
    return;
  g_clear_pointer (&imp->net, nl_network_free);
  for (guint i = 0; imp->weights && i < imp->weights->len; i++)
    nl_tensor_unref (g_array_index (imp->weights, NlOnnxWeight, i).t);
  g_clear_pointer (&imp->weights, g_array_unref);
  g_clear_pointer (&imp->meta, g_hash_table_unref);
  g_free (imp);
}

static int
model_opset (const Onnx__ModelProto *m)
{
  for (size_t k = 0; k < m->n_opset_import; k++)
    {
      const Onnx__OperatorSetIdProto *o = m->opset_import[k];
      if (!o->domain || !*o->domain || !strcmp (o->domain, "ai.onnx"))
        return o->has_version ? (int) o->version : 1;
    }
  return 0;
}

/* The graph's output is computed by a netloom node. Several outputs: the
 * first is taken when the others are further outputs of the node that
 * computes it (an LSTM's Y_h beside Y); netloom networks have one. */
static gboolean
graph_output (NlOnnxImp *im)
{
  const Onnx__GraphProto *g = im->g;
  const char *name = g->n_output > 0 ? g->output[0]->name : NULL;
  int node;
  if (!name)
    return FALSE;
  for (size_t k = 1; k < g->n_output; k++)
    {
      gboolean sibling = FALSE;
      for (size_t j = 0; j < g->n_node && !sibling; j++)
        {
          const Onnx__NodeProto *n = g->node[j];
          gboolean first = FALSE, other = FALSE;
          for (size_t o = 0; o < n->n_output; o++)
            {
              first = first || (n->output[o] && !strcmp (n->output[o], name));
              other = other || (n->output[o] && g->output[k]->name && !strcmp (n->output[o], g->output[k]->name));
            }
          sibling = first && other;
        }
      if (!sibling)
        return FALSE;
    }
  if (nl_onnx_imp_data (im, name) >= 0)
    return TRUE;
  node = nl_onnx_map_seq_output (im, name);
  if (node < 0)
    return FALSE;
  g_hash_table_insert (im->values, g_strdup (name), GINT_TO_POINTER (node + 1));
  return TRUE;
}

static gboolean
import_graph (NlOnnxImp *im, const Onnx__ModelProto *m, const char *base_dir, GHashTable *bound, GError **error)
{
  const Onnx__GraphProto *g = m->graph;
  g_autoptr (GString) problems = g_string_new (NULL);
  int n_problems = 0;

  for (size_t k = 0; k < g->n_initializer; k++)
    {
      NlOnnxConst *c;
      if (!g->initializer[k]->name || !(c = nl_onnx_const_from_proto (g->initializer[k], base_dir, error)))
        return error && *error ? FALSE : (g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_PARSE,
                                                        "an initializer has no name"), FALSE);
      g_hash_table_insert (im->consts, g_strdup (g->initializer[k]->name), c);
    }
  if (bound)
    {
      GHashTableIter it;
      gpointer key, value;
      g_hash_table_iter_init (&it, bound);
      while (g_hash_table_iter_next (&it, &key, &value))
        {
          gsize size;
          const guint8 *bytes = g_bytes_get_data (value, &size);
          Onnx__TensorProto *t = onnx__tensor_proto__unpack (NULL, size, bytes);
          NlOnnxConst *c = t ? nl_onnx_const_from_proto (t, NULL, error) : NULL;
          if (t)
            onnx__tensor_proto__free_unpacked (t, NULL);
          if (!c)
            return error && *error ? FALSE : (g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_PARSE,
                                                            "bound input “%s” is not a tensor", (char *) key), FALSE);
          g_hash_table_insert (im->consts, g_strdup (key), c);
        }
    }
  for (size_t k = 0; k < g->n_node; k++)
    for (size_t j = 0; j < g->node[k]->n_input; j++)
      if (g->node[k]->input[j])
        {
          g_hash_table_insert (im->uses, g_strdup (g->node[k]->input[j]),
                               GINT_TO_POINTER (GPOINTER_TO_INT (g_hash_table_lookup (im->uses, g->node[k]->input[j])) + 1));
          g_hash_table_insert (im->consumer, g_strdup (g->node[k]->input[j]), GINT_TO_POINTER ((int) k + 1));
        }

  /* Constant nodes first: patterns look ahead at constants defined later */
  for (size_t k = 0; k < g->n_node; k++)
    {
      const Onnx__NodeProto *n = g->node[k];
      g_autofree char *why = NULL;
      NlOnnxConst *c;
      if (!n->op_type || strcmp (n->op_type, "Constant") != 0 || n->n_input > 0 || n->n_output < 1 || !n->output[0])
        continue;
      if (!(c = nl_onnx_fold (n, NULL, 0, &why, error)))
        return FALSE;
      g_hash_table_insert (im->consts, g_strdup (n->output[0]), c);
      g_hash_table_add (im->absorbed, (gpointer) n);
    }
  map_input (im, problems, &n_problems);
  for (size_t k = 0; k < g->n_node; k++)
    {
      const Onnx__NodeProto *n = g->node[k];
      NlOnnxResult r = map_node (im, n, error);
      if (r == NL_ONNX_FAILED)
        return FALSE;
      if (r == NL_ONNX_UNSUPPORTED || r == NL_ONNX_SKIPPED)
        for (size_t j = 0; j < n->n_output; j++)
          if (n->output[j] && *n->output[j])
            g_hash_table_add (im->poisoned, g_strdup (n->output[j]));
      if (r == NL_ONNX_UNSUPPORTED)
        {
          g_string_append_printf (problems, "\n  %s “%s” (opset %d): %s", n->op_type ? n->op_type : "?",
                                  n->name && *n->name ? n->name : "unnamed", im->opset, im->why);
          n_problems++;
        }
    }
  if (n_problems == 0 && !graph_output (im))
    {
      g_string_append_printf (problems, "\n  the graph must have one output computed from its input (it has %zu)",
                              g->n_output);
      n_problems++;
    }
  if (n_problems > 0)
    {
      g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED, "%d node%s cannot be imported:%s", n_problems,
                   n_problems == 1 ? "" : "s", problems->str);
      return FALSE;
    }
  return nl_network_validate (im->imp->net, NULL, error);
}

NlOnnxImport *
nl_onnx_import_data (const void *data, gsize size, const char *base_dir, GHashTable *bound, GError **error)
{
  Onnx__ModelProto *m = onnx__model_proto__unpack (NULL, size, data);
  g_autoptr (NlOnnxImport) imp = NULL;
  NlOnnxImp im = { 0 };
  gboolean ok;

  if (!m || !m->graph)
    {
      g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_PARSE,
                   "not an ONNX model (the protobuf is malformed or truncated%s)", m ? ", or has no graph" : "");
      if (m)
        onnx__model_proto__free_unpacked (m, NULL);
      return NULL;
    }
  im.opset = model_opset (m);
  /* 9 to 17 are what the op mappings are written for; older models import when
   * their nodes read the same (Relu, Softplus ... never changed) */
  if (im.opset < 1 || im.opset > NL_ONNX_OPSET_MAX)
    {
      g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_OPSET, "the model uses opset %d; netloom imports up to %d",
                   im.opset, NL_ONNX_OPSET_MAX);
      onnx__model_proto__free_unpacked (m, NULL);
      return NULL;
    }
  imp = g_new0 (NlOnnxImport, 1);
  /* protobuf-c does not check that strings are UTF-8; the network's name
   * goes into JSON, which must be */
  imp->net = nl_network_new (m->graph->name && *m->graph->name && g_utf8_validate (m->graph->name, -1, NULL)
                             ? m->graph->name : "imported");
  imp->weights = g_array_new (FALSE, FALSE, sizeof (NlOnnxWeight));
  imp->meta = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (size_t k = 0; k < m->n_metadata_props; k++)
    if (m->metadata_props[k]->key && m->metadata_props[k]->value
        && g_utf8_validate (m->metadata_props[k]->key, -1, NULL) && g_utf8_validate (m->metadata_props[k]->value, -1, NULL))
      g_hash_table_insert (imp->meta, g_strdup (m->metadata_props[k]->key), g_strdup (m->metadata_props[k]->value));
  im.imp = imp;
  im.g = m->graph;
  im.consts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) nl_onnx_const_free);
  im.values = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im.uses = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im.poisoned = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im.consumer = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im.absorbed = g_hash_table_new (NULL, NULL);
  im.views = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  im.shapes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im.zeros = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  ok = import_graph (&im, m, base_dir, bound, error);
  g_hash_table_unref (im.consts);
  g_hash_table_unref (im.values);
  g_hash_table_unref (im.uses);
  g_hash_table_unref (im.poisoned);
  g_hash_table_unref (im.consumer);
  g_hash_table_unref (im.absorbed);
  g_hash_table_unref (im.views);
  g_hash_table_unref (im.shapes);
  g_hash_table_unref (im.zeros);
  g_free (im.why);
  onnx__model_proto__free_unpacked (m, NULL);
  return ok ? g_steal_pointer (&imp) : NULL;
}

NlOnnxImport *
nl_onnx_import_file (const char *path, GError **error)
{
  g_autofree char *contents = NULL, *dir = NULL;
  gsize size;
  g_autoptr (GError) local = NULL;
  NlOnnxImport *imp;
  if (!g_file_get_contents (path, &contents, &size, error))
    return NULL;
  dir = g_path_get_dirname (path);
  if (!(imp = nl_onnx_import_data (contents, size, dir, NULL, &local)))
    g_propagate_prefixed_error (error, g_steal_pointer (&local), "%s: ", path);
  return imp;
}

NlNetwork *
nl_onnx_import_get_network (NlOnnxImport *imp)
{
  return imp->net;
}

NlShape
nl_onnx_import_get_sample_shape (NlOnnxImport *imp)
{
  return imp->sample;
}

const char *
nl_onnx_import_get_metadata (NlOnnxImport *imp, const char *key)
{
  return g_hash_table_lookup (imp->meta, key);
}

NlModel *
nl_onnx_import_new_model (NlOnnxImport *imp, const NlOptimConfig *optim, GError **error)
{
  g_autoptr (NlModel) m = nl_model_new_full (imp->net, &imp->sample, &(NlModelOptions) { .optim = optim }, error);
  char a[96], b[96];
  if (!m)
    return NULL;
  for (guint i = 0; i < imp->weights->len; i++)
    {
      const NlOnnxWeight *w = &g_array_index (imp->weights, NlOnnxWeight, i);
      NlTensor *dst = (w->aux ? m->aux : m->weights)[NL_MODEL_SLOT (w->node, w->slot)];
      NlShape ws = nl_tensor_get_shape (w->t);
      if (!dst || nl_tensor_numel (dst) != nl_tensor_numel (w->t))
        {
          NlShape ds = dst ? nl_tensor_get_shape (dst) : (NlShape) { 0 };
          g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED,
                       "node '%s': the model gives a tensor of shape %s where netloom expects %s",
                       nl_network_node (imp->net, w->node)->id, nl_shape_format (&ws, a, sizeof a),
                       dst ? nl_shape_format (&ds, b, sizeof b) : "none");
          return NULL;
        }
      memcpy (nl_tensor_f32 (dst), nl_tensor_f32 (w->t), sizeof (float) * nl_tensor_numel (dst));
    }
  nl_model_host_changed (m);
  return g_steal_pointer (&m);
}
