/* nl-network.c — network documents: JSON in and out, editing, validation. */
#include "engine/graph/nl-network.h"
#include "core/nl-atomic-file.h"
#include "core/nl-json-doc.h"
#include "ops/nl-op-registry.h"
#include "core/nl-json-guard.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK (nl-network-error-quark, nl_network_error)

static void
node_free (gpointer p)
{
  NlNode *n = p;
  g_free (n->id);
  g_free (n->params);
  g_free (n);
}

NlNetwork *
nl_network_new (const char *name)
{
  NlNetwork *net = g_new0 (NlNetwork, 1);
  net->name = g_strdup (name ? name : "network");
  net->nodes = g_ptr_array_new_with_free_func (node_free);
  net->edges = g_array_new (FALSE, FALSE, sizeof (NlEdge));
  return net;
}

void
nl_network_free (NlNetwork *net)
{
  if (!net)
    return;
  g_free (net->name);
  g_ptr_array_unref (net->nodes);
  g_array_unref (net->edges);
  g_free (net);
}

NlNetwork *
nl_network_copy (const NlNetwork *net)
{
  NlNetwork *c = nl_network_new (net->name);
  for (int i = 0; i < nl_network_n_nodes (net); i++)
    {
      const NlNode *n = nl_network_node (net, i);
      NlNode *m = g_new0 (NlNode, 1);
      *m = *n;
      m->id = g_strdup (n->id);
      m->params = g_memdup2 (n->params, sizeof (NlParamValue) * MAX (n->def->n_params, 1));
      g_ptr_array_add (c->nodes, m);
    }
  g_array_append_vals (c->edges, net->edges->data, net->edges->len);
  return c;
}

int
nl_network_find (const NlNetwork *net, const char *id)
{
  for (int i = 0; i < nl_network_n_nodes (net); i++)
    if (strcmp (nl_network_node (net, i)->id, id) == 0)
      return i;
  return -1;
}

static char *
known_ops (void)
{
  GString *s = g_string_new (NULL);
  for (int i = 0; i < NL_OP_COUNT; i++)
    if (nl_op_get (i))
      g_string_append_printf (s, "%s%s", s->len ? ", " : "", nl_op_get (i)->name);
  return g_string_free (s, FALSE);
}

/* ids, when not NULL, maps every node id to its index + 1: the loader's
 * duplicate check and edge lookups stay constant-time on big networks. */
static int
add_node (NlNetwork *net, const char *id, const char *op, GHashTable *ids, GError **error)
{
  const NlOpDef *def = nl_op_lookup (op);
  NlNode *n;

  if (id == NULL || *id == '\0' || strpbrk (id, ": ->") != NULL)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                   "node id '%s' is not valid (use letters, digits, '_' or '.')", id ? id : "");
      return -1;
    }
  if (ids ? g_hash_table_contains (ids, id) : nl_network_find (net, id) >= 0)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE, "two nodes are named '%s'", id);
      return -1;
    }
  if (def == NULL)
    {
      g_autofree char *known = known_ops ();
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_UNKNOWN_OP,
                   "node '%s': unknown op '%s' (known: %s)", id, op, known);
      return -1;
    }
  n = g_new0 (NlNode, 1);
  n->id = g_strdup (id);
  n->def = def;
  n->params = g_new0 (NlParamValue, MAX (def->n_params, 1));
  nl_params_init_defaults (def, n->params);
  g_ptr_array_add (net->nodes, n);
  if (ids)
    g_hash_table_insert (ids, n->id, GINT_TO_POINTER (nl_network_n_nodes (net)));
  return nl_network_n_nodes (net) - 1;
}

int
nl_network_add_node (NlNetwork *net, const char *id, const char *op, GError **error)
{
  return add_node (net, id, op, NULL, error);
}

gboolean
nl_network_set_param (NlNetwork *net, int node, const char *name, const char *value, GError **error)
{
  NlNode *n = nl_network_node (net, node);
  g_autoptr (GError) local = NULL;
  if (!nl_params_set_from_string (n->def, n->params, name, value, &local))
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARAM, "node '%s': %s", n->id, local->message);
      return FALSE;
    }
  return TRUE;
}

static int
max_inputs (const NlOpDef *def)
{
  return def->variadic ? NL_MAX_PORTS : def->n_inputs;
}

/* taken, when not NULL, marks the connected input ports (node * NL_MAX_PORTS
 * + port) of every node, so the loader need not scan the edges per edge. */
static gboolean
connect_ports (NlNetwork *net, int from, int from_port, int to, int to_port, guint8 *taken, GError **error)
{
  NlEdge e = { from, from_port, to, to_port };
  NlNode *src, *dst;

  g_return_val_if_fail (from >= 0 && from < nl_network_n_nodes (net), FALSE);
  g_return_val_if_fail (to >= 0 && to < nl_network_n_nodes (net), FALSE);
  src = nl_network_node (net, from);
  dst = nl_network_node (net, to);
  if (from_port < 0 || from_port >= src->def->n_outputs)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE,
                   "node '%s' (%s) has no output port %d", src->id, src->def->name, from_port);
      return FALSE;
    }
  if (to_port < 0 || to_port >= max_inputs (dst->def) || strcmp (dst->def->name, "Input") == 0)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE,
                   "node '%s' (%s) has no input port %d", dst->id, dst->def->name, to_port);
      return FALSE;
    }
  for (guint i = 0; i < (taken ? 0 : net->edges->len); i++)
    {
      NlEdge *o = &g_array_index (net->edges, NlEdge, i);
      if (o->to == to && o->to_port == to_port)
        goto twice;
    }
  if (taken && taken[(gsize) to * NL_MAX_PORTS + to_port]++)
    goto twice;
  g_array_append_val (net->edges, e);
  return TRUE;

twice:
  g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE, "input port %d of node '%s' is connected twice",
               to_port, dst->id);
  return FALSE;
}

gboolean
nl_network_connect (NlNetwork *net, int from, int from_port, int to, int to_port, GError **error)
{
  return connect_ports (net, from, from_port, to, to_port, NULL, error);
}

void
nl_network_edges_by_node (const NlNetwork *net, gboolean by_to, int **first, int **edge)
{
  int nn = nl_network_n_nodes (net);
  int *f = g_new0 (int, nn + 2), *ed = g_new (int, MAX (net->edges->len, 1));

  /* counting sort: each node's count two slots ahead, so that after the
   * prefix sums f[v + 1] is node v's start and the fill leaves it at v + 1's */
  for (guint k = 0; k < net->edges->len; k++)
    {
      const NlEdge *e = &g_array_index (net->edges, NlEdge, k);
      int v = by_to ? e->to : e->from;
      if (v >= 0 && v < nn)
        f[v + 2]++;
    }
  for (int i = 0; i < nn; i++)
    f[i + 2] += f[i + 1];
  for (guint k = 0; k < net->edges->len; k++)
    {
      const NlEdge *e = &g_array_index (net->edges, NlEdge, k);
      int v = by_to ? e->to : e->from;
      if (v >= 0 && v < nn)
        ed[f[v + 1]++] = (int) k;
    }
  *first = f;
  *edge = ed;
}

int
nl_network_n_connected (const NlNetwork *net, int node)
{
  int n = 0;
  for (guint i = 0; i < net->edges->len; i++)
    n += g_array_index (net->edges, NlEdge, i).to == node;
  return n;
}

gboolean
nl_network_validate (const NlNetwork *net, int *order, GError **error)
{
  int nn = nl_network_n_nodes (net);
  g_autofree int *indeg = g_new0 (int, nn + 1);
  g_autofree int *queue = g_new0 (int, nn + 1);
  g_autofree int *in_first = NULL, *in_edge = NULL, *out_first = NULL, *out_edge = NULL;
  g_autofree gboolean *has_port = NULL;
  int head = 0, tail = 0;

  if (nn == 0)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE, "the network has no nodes");
      return FALSE;
    }
  /* each node's edges in edge order: every check below is linear in edges */
  nl_network_edges_by_node (net, TRUE, &in_first, &in_edge);
  nl_network_edges_by_node (net, FALSE, &out_first, &out_edge);
  for (int i = 0; i < nn; i++)
    {
      NlNode *n = nl_network_node (net, i);
      g_autoptr (GError) local = NULL;
      int connected = in_first[i + 1] - in_first[i];
      int n_ports = n->def->variadic ? connected : n->def->n_inputs;
      gboolean is_input = strcmp (n->def->name, "Input") == 0;

      if (!nl_params_validate (n->def, n->params, &local))
        {
          g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARAM, "node '%s': %s", n->id, local->message);
          return FALSE;
        }
      if (is_input)
        continue;
      /* every port connected, contiguously from 0; a loss's label may stay open */
      has_port = g_renew (gboolean, has_port, MAX (n_ports, 1));
      memset (has_port, 0, sizeof (gboolean) * MAX (n_ports, 1));
      for (int k = in_first[i]; k < in_first[i + 1]; k++)
        {
          int port = g_array_index (net->edges, NlEdge, in_edge[k]).to_port;
          if (port >= 0 && port < n_ports)
            has_port[port] = TRUE;
        }
      /* optional trailing ports (min_inputs) may stay open, but only from the end */
      while (n->def->min_inputs > 0 && n_ports > n->def->min_inputs && !has_port[n_ports - 1])
        n_ports--;
      for (int port = 0; port < n_ports; port++)
        if (!has_port[port] && !(n->def->is_loss && port == 1))
          {
            g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                         "node '%s' (%s): input '%s' (port %d) is not connected", n->id, n->def->name,
                         n->def->inputs[MIN (port, n->def->n_inputs - 1)], port);
            return FALSE;
          }
      if (n->def->variadic && connected == 0)
        {
          g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                       "node '%s' (%s) has no inputs connected", n->id, n->def->name);
          return FALSE;
        }
    }
  for (guint k = 0; k < net->edges->len; k++)
    {
      NlEdge *e = &g_array_index (net->edges, NlEdge, k);
      if (e->from < 0 || e->from >= nn || e->to < 0 || e->to >= nn)
        {
          g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE, "an edge refers to a node that does not exist");
          return FALSE;
        }
      indeg[e->to]++;
    }
  /* Kahn's algorithm, lowest index first, so the order is stable */
  for (int i = 0; i < nn; i++)
    if (indeg[i] == 0)
      queue[tail++] = i;
  while (head < tail)
    {
      int v = queue[head++];
      for (int k = out_first[v]; k < out_first[v + 1]; k++)
        {
          NlEdge *e = &g_array_index (net->edges, NlEdge, out_edge[k]);
          if (--indeg[e->to] == 0)
            queue[tail++] = e->to;
        }
    }
  if (tail < nn)
    {
      for (int i = 0; i < nn; i++)
        if (indeg[i] > 0)
          {
            g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_CYCLE,
                         "the network has a cycle through node '%s'", nl_network_node (net, i)->id);
            return FALSE;
          }
    }
  if (order)
    memcpy (order, queue, sizeof (int) * nn);
  return TRUE;
}

/* ---- JSON ---- */

static char *
json_value_to_param_string (const NlJsonValue *v)
{
  switch (v->type)
    {
    case NL_JSON_ARRAY:
      {
        GString *s = g_string_new (NULL);
        for (const NlJsonValue *e = nl_json_first (v); e; e = nl_json_next (v, e))
          {
            if (e->type != NL_JSON_INT)
              {
                g_string_free (s, TRUE);
                return NULL;
              }
            g_string_append_printf (s, "%s%" G_GINT64_FORMAT, s->len ? "," : "", e->i);
          }
        return g_string_free (s, FALSE);
      }
    case NL_JSON_INT:
      return g_strdup_printf ("%" G_GINT64_FORMAT, v->i);
    case NL_JSON_DOUBLE:
      {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        return g_strdup (g_ascii_dtostr (buf, sizeof buf, v->d));
      }
    case NL_JSON_BOOL:
      return g_strdup (v->b ? "true" : "false");
    case NL_JSON_STRING:
      return g_strdup (v->s);
    default:
      return NULL;
    }
}

/* The string member name of o in *value (NULL when absent); FALSE when it
 * is there but not a string. */
static gboolean
string_member (const NlJsonValue *o, const char *name, const char **value)
{
  const NlJsonValue *v = nl_json_member (o, name);
  *value = v && v->type == NL_JSON_STRING ? v->s : NULL;
  return !v || v->type == NL_JSON_STRING;
}

/* What the loader looks up per node and per edge, so loading stays linear:
 * ids maps an id to its index + 1, taken marks connected input ports. */
typedef struct {
  NlNetwork *net;
  GHashTable *ids;
  guint8 *taken;
} Loader;

/* "node:port" or "node" (port 0) */
static gboolean
parse_endpoint (const Loader *ld, const char *text, int *node, int *port, GError **error)
{
  g_autofree char *s = g_strstrip (g_strdup (text));
  char *colon = strrchr (s, ':');
  *port = 0;
  if (colon)
    {
      char *end;
      long long v;
      *colon = '\0';
      errno = 0;
      v = strtoll (colon + 1, &end, 10);
      /* a port past int (x:4294967296) must not wrap around to a small one */
      if (end == colon + 1 || *end != '\0' || errno == ERANGE || v < G_MININT || v > G_MAXINT)
        {
          g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE, "edge endpoint '%s' has a bad port", text);
          return FALSE;
        }
      *port = (int) v;
    }
  *node = GPOINTER_TO_INT (g_hash_table_lookup (ld->ids, s)) - 1;
  if (*node < 0)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE,
                   "an edge refers to node '%s', which does not exist", s);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_edge (const Loader *ld, const NlJsonValue *e, guint k, GError **error)
{
  const char *from = NULL, *to = NULL;
  g_auto (GStrv) parts = NULL;
  int a, ap, b, bp;

  if (e->type == NL_JSON_STRING)
    {
      parts = g_strsplit (e->s, "->", -1);
      if (g_strv_length (parts) == 2)
        from = parts[0], to = parts[1];
    }
  else if (e->type == NL_JSON_OBJECT)
    {
      if (!string_member (e, "from", &from) || !string_member (e, "to", &to))
        {
          g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE,
                       "edge %u: \"from\" and \"to\" must be strings (\"node:port\")", k);
          return FALSE;
        }
    }
  if (!from || !to)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE,
                   "an edge must be \"node:port -> node:port\" or {\"from\": ..., \"to\": ...}");
      return FALSE;
    }
  return parse_endpoint (ld, from, &a, &ap, error) && parse_endpoint (ld, to, &b, &bp, error)
         && connect_ports (ld->net, a, ap, b, bp, ld->taken, error);
}

/* A canvas position: two finite numbers. JSON cannot hold inf or NaN, so
 * a position of 1e999 (read as inf) would be saved as something no reader
 * takes back. */
static gboolean
parse_position (NlNode *n, const NlJsonValue *p, GError **error)
{
  const NlJsonValue *x = p->type == NL_JSON_ARRAY && p->count == 2 ? nl_json_first (p) : NULL;
  const NlJsonValue *y = x ? nl_json_next (p, x) : NULL;

  /* the reader refuses numbers past a double; these are finite */
  if (x && y && (x->type == NL_JSON_INT || x->type == NL_JSON_DOUBLE)
      && (y->type == NL_JSON_INT || y->type == NL_JSON_DOUBLE))
    {
      n->x = nl_json_number (x);
      n->y = nl_json_number (y);
      n->has_position = TRUE;
      return TRUE;
    }
  g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARSE, "node '%s': \"pos\" must be [x, y], two finite numbers",
               n->id);
  return FALSE;
}

static gboolean
parse_node (const Loader *ld, const NlJsonValue *o, guint k, GError **error)
{
  const NlJsonValue *po, *pos;
  const char *id, *op;
  int idx;

  if (o->type != NL_JSON_OBJECT)
    goto bad;
  if (!string_member (o, "id", &id) || !string_member (o, "op", &op))
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARSE, "node %u: \"%s\" must be a string", k,
                   string_member (o, "id", &id) ? "op" : "id");
      return FALSE;
    }
  if (!id || !op)
    goto bad;
  idx = add_node (ld->net, id, op, ld->ids, error);
  if (idx < 0)
    return FALSE;
  if ((po = nl_json_member (o, "params")))
    {
      if (po->type != NL_JSON_OBJECT)
        {
          g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARAM, "node '%s': params must be an object", id);
          return FALSE;
        }
      for (const NlJsonValue *key = nl_json_first (po); key; key = nl_json_next (po, key))
        {
          /* a name given twice is set twice: the last one holds */
          g_autofree char *text = json_value_to_param_string (key + 1);
          if (!text)
            {
              g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARAM,
                           "node '%s': parameter '%s' has a value of the wrong kind", id, key->s);
              return FALSE;
            }
          if (!nl_network_set_param (ld->net, idx, key->s, text, error))
            return FALSE;
        }
    }
  if ((pos = nl_json_member (o, "pos")))
    return parse_position (nl_network_node (ld->net, idx), pos, error);
  return TRUE;

bad:
  g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARSE, "every node needs an \"id\" and an \"op\" string");
  return FALSE;
}

static NlNetwork *
not_network (GError **error)
{
  g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARSE,
               "not a netloom network (expected {\"format\": \"%s\", \"version\": %d, \"nodes\": [...], "
               "\"edges\": [...]})",
               NL_NETWORK_FORMAT, NL_NETWORK_VERSION);
  return NULL;
}

static gboolean
parse_nodes_and_edges (NlNetwork *net, const NlJsonValue *nodes, const NlJsonValue *edges, GError **error)
{
  g_autoptr (GHashTable) ids = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree guint8 *taken = NULL;
  Loader ld = { net, ids, NULL };
  guint i = 0;

  for (const NlJsonValue *n = nl_json_first (nodes); n; n = nl_json_next (nodes, n), i++)
    if (!parse_node (&ld, n, i, error))
      return FALSE;
  if (!edges)
    return TRUE;
  ld.taken = taken = g_new0 (guint8, (gsize) MAX (nl_network_n_nodes (net), 1) * NL_MAX_PORTS);
  i = 0;
  for (const NlJsonValue *e = nl_json_first (edges); e; e = nl_json_next (edges, e), i++)
    if (!parse_edge (&ld, e, i, error))
      return FALSE;
  return TRUE;
}

/* Networks run to megabytes (32,000 nodes are 3 MB), so they are read with
 * the flat reader, not json-glib's tree of hash tables. */
NlNetwork *
nl_network_load_data (const char *json, gssize length, GError **error)
{
  g_autoptr (NlJsonDoc) doc = NULL;
  g_autoptr (NlNetwork) net = NULL;
  g_autoptr (GError) local = NULL;
  const NlJsonValue *root, *version, *nodes, *edges;
  const char *format, *name;

  if (!nl_json_check_depth (json, length, "the network", &local) || !(doc = nl_json_doc_parse (json, length, &local)))
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARSE, "not valid JSON: %s", local->message);
      return NULL;
    }
  root = nl_json_doc_root (doc);
  if (root->type != NL_JSON_OBJECT)
    return not_network (error);
  if (!string_member (root, "format", &format) || g_strcmp0 (format, NL_NETWORK_FORMAT) != 0)
    return not_network (error);
  version = nl_json_member (root, "version");
  if (version && version->type != NL_JSON_NULL && version->type != NL_JSON_INT && version->type != NL_JSON_DOUBLE
      && version->type != NL_JSON_BOOL && version->type != NL_JSON_STRING)
    return not_network (error);
  /* a version that is no number reads as 0, as json-glib read it */
  if (version && (version->type == NL_JSON_INT || version->type == NL_JSON_DOUBLE)
      && nl_json_number (version) > NL_NETWORK_VERSION)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARSE,
                   "the network is format version %g; this netloom reads up to version %d", nl_json_number (version),
                   NL_NETWORK_VERSION);
      return NULL;
    }
  nodes = nl_json_member (root, "nodes");
  if (!nodes || nodes->type != NL_JSON_ARRAY)
    return not_network (error);
  edges = nl_json_member (root, "edges");
  if (edges && edges->type != NL_JSON_ARRAY)
    return not_network (error);
  if (!string_member (root, "name", &name))
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARSE, "the network's \"name\" must be a string");
      return NULL;
    }
  net = nl_network_new (name ? name : "network");
  if (!parse_nodes_and_edges (net, nodes, edges, error))
    return NULL;
  return g_steal_pointer (&net);
}

NlNetwork *
nl_network_load_file (const char *path, GError **error)
{
  g_autofree char *contents = NULL;
  gsize len;
  g_autoptr (GError) local = NULL;
  NlNetwork *net;

  if (!g_file_get_contents (path, &contents, &len, &local))
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARSE, "cannot read network %s: %s", path, local->message);
      return NULL;
    }
  net = nl_network_load_data (contents, len, &local);
  if (!net)
    {
      g_set_error (error, NL_NETWORK_ERROR, local->code, "%s: %s", path, local->message);
      return NULL;
    }
  return net;
}

static void
add_param (JsonBuilder *b, const NlParamSpec *s, const NlParamValue *v)
{
  json_builder_set_member_name (b, s->name);
  switch (s->type)
    {
    case NL_PARAM_INT:
      json_builder_add_int_value (b, v->i);
      break;
    case NL_PARAM_FLOAT:
      json_builder_add_double_value (b, v->f);
      break;
    case NL_PARAM_BOOL:
      json_builder_add_boolean_value (b, v->i != 0);
      break;
    case NL_PARAM_ENUM:
      json_builder_add_string_value (b, s->enum_values[v->i]);
      break;
    case NL_PARAM_INT2:
    case NL_PARAM_SHAPE:
      json_builder_begin_array (b);
      for (int j = 0; j < v->n; j++)
        json_builder_add_int_value (b, v->v[j]);
      json_builder_end_array (b);
      break;
    }
}

char *
nl_network_to_json (const NlNetwork *net)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, NL_NETWORK_FORMAT);
  json_builder_set_member_name (b, "version");
  json_builder_add_int_value (b, NL_NETWORK_VERSION);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, net->name);
  json_builder_set_member_name (b, "nodes");
  json_builder_begin_array (b);
  for (int i = 0; i < nl_network_n_nodes (net); i++)
    {
      const NlNode *n = nl_network_node (net, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, n->id);
      json_builder_set_member_name (b, "op");
      json_builder_add_string_value (b, n->def->name);
      json_builder_set_member_name (b, "params");
      json_builder_begin_object (b);
      /* only what differs from the defaults, so documents stay short */
      for (int k = 0; k < n->def->n_params; k++)
        if (n->params[k].set)
          add_param (b, &n->def->params[k], &n->params[k]);
      json_builder_end_object (b);
      if (n->has_position && isfinite (n->x) && isfinite (n->y))
        {
          json_builder_set_member_name (b, "pos");
          json_builder_begin_array (b);
          json_builder_add_double_value (b, n->x);
          json_builder_add_double_value (b, n->y);
          json_builder_end_array (b);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "edges");
  json_builder_begin_array (b);
  for (guint k = 0; k < net->edges->len; k++)
    {
      const NlEdge *e = &g_array_index (net->edges, NlEdge, k);
      g_autofree char *s = g_strdup_printf ("%s:%d -> %s:%d", nl_network_node (net, e->from)->id, e->from_port,
                                            nl_network_node (net, e->to)->id, e->to_port);
      json_builder_add_string_value (b, s);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_indent (gen, 2);
  /* 1e17 or a parameter of 1e-08 as JSON, exactly (json-glib adds ".0") */
  return nl_json_fix_numbers (json_generator_to_data (gen, NULL));
}

gboolean
nl_network_save_file (const NlNetwork *net, const char *path, GError **error)
{
  g_autofree char *json = nl_network_to_json (net);
  /* a temporary file renamed into place: no half writes */
  return nl_atomic_file_set_contents (path, json, strlen (json), error);
}
