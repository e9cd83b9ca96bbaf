/* nl-network-doc-edit.c — NlNetworkDoc's edits: add, remove, move, connect,
 * parameters, rename. Each applies primitives and records them in a group
 * (one undo step); refusals change nothing and say why. */
#include "ui/network/nl-network-doc-private.h"
#include <glib/gi18n.h>

#include <math.h>
#include <string.h>

int
nl_network_doc_add_node (NlNetworkDoc *doc, const char *op_name, double x, double y, GError **error)
{
  const NlOpDef *def;
  g_autofree char *id = NULL;
  g_autofree char *label = NULL;
  NlNode *nd;
  Op *op;
  int idx;

  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), -1);
  g_return_val_if_fail (op_name != NULL, -1);
  def = nl_catalog_lookup (op_name);
  if (!def)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_UNKNOWN_OP, _("there is no layer type '%s'"), op_name);
      return -1;
    }
  id = nl_catalog_new_node_id (doc->net, def->name);
  idx = nl_network_add_node (doc->net, id, def->name, error);
  if (idx < 0)
    return -1;
  nd = nl_network_node (doc->net, idx);
  nd->x = x;
  nd->y = y;
  nd->has_position = TRUE;
  label = g_strdup_printf (_("Add %s"), def->name);
  nl_network_doc_begin_group (doc, label);
  op = _nl_doc_op_new (OP_NODES, 1);
  op->add = TRUE;
  op->idx[0] = idx;
  op->nodes = g_new0 (NlNode *, 1); /* NULL: the node is in the network */
  _nl_doc_record (doc, op);
  nl_network_doc_end_group (doc);
  return idx;
}

void
nl_network_doc_remove_nodes (NlNetworkDoc *doc, const int *nodes, int n)
{
  g_autofree int *s = NULL;
  g_autofree int *old_sel = NULL;
  g_autofree char *what = NULL;
  g_autofree char *label = NULL;
  g_autofree gboolean *gone = NULL;
  GArray *ei;
  int m, n_old;
  Op *op;

  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  g_return_if_fail (n == 0 || nodes != NULL);
  g_return_if_fail (_nl_doc_all_valid (doc, nodes, n));
  s = _nl_doc_sort_unique (doc, nodes, n, &m);
  if (m == 0)
    return;
  what = _nl_doc_describe (doc, s, m);
  label = g_strdup_printf (_("Remove %s"), what);
  old_sel = _nl_doc_sel_dup (doc, &n_old);
  nl_network_doc_begin_group (doc, label);

  /* the edges touching them first, so node removal only renumbers */
  gone = g_new0 (gboolean, nl_network_n_nodes (doc->net));
  for (int i = 0; i < m; i++)
    gone[s[i]] = TRUE;
  ei = g_array_new (FALSE, FALSE, sizeof (int));
  for (guint i = 0; i < doc->net->edges->len; i++)
    {
      NlEdge *e = &g_array_index (doc->net->edges, NlEdge, i);
      if (gone[e->from] || gone[e->to])
        {
          int k = i;
          g_array_append_val (ei, k);
        }
    }
  if (ei->len > 0)
    {
      op = _nl_doc_op_new (OP_EDGES, ei->len);
      memcpy (op->idx, ei->data, sizeof (int) * ei->len);
      op->edges = g_new (NlEdge, ei->len);
      _nl_doc_edges_remove (doc, op->idx, op->edges, op->n);
      _nl_doc_record (doc, op);
    }
  g_array_unref (ei);

  op = _nl_doc_op_new (OP_NODES, m);
  memcpy (op->idx, s, sizeof (int) * m);
  op->nodes = g_new0 (NlNode *, m);
  _nl_doc_nodes_remove (doc, op->idx, op->nodes, m);
  _nl_doc_record (doc, op);
  _nl_doc_sel_notify (doc, old_sel, n_old);
  nl_network_doc_end_group (doc);
}

/* Sets positions xy[2i], xy[2i+1] of nodes idx[i]; only the ones that change
 * are recorded. A move of the same nodes right after a move in the same
 * group merges into it. */
void
_nl_doc_set_positions (NlNetworkDoc *doc, const int *idx, int n, const double *xy, gboolean is_move)
{
  Op *op, *last = NULL;
  int k = 0;

  if (is_move && doc->pending->ops->len > 0)
    {
      last = g_ptr_array_index (doc->pending->ops, doc->pending->ops->len - 1);
      if (last->kind != OP_POSITIONS || !last->is_move || last->n != n
          || memcmp (last->idx, idx, sizeof (int) * n) != 0)
        last = NULL;
    }
  if (last)
    {
      for (int i = 0; i < n; i++)
        {
          last->xy[4 * i + 2] = xy[2 * i];
          last->xy[4 * i + 3] = xy[2 * i + 1];
        }
      _nl_doc_op_apply (doc, last, TRUE);
      return;
    }
  op = _nl_doc_op_new (OP_POSITIONS, n);
  op->is_move = is_move;
  op->xy = g_new (double, 4 * MAX (n, 1));
  op->had = g_new (guint8, MAX (n, 1));
  for (int i = 0; i < n; i++)
    {
      NlNode *nd = nl_network_node (doc->net, idx[i]);
      if (nd->has_position && nd->x == xy[2 * i] && nd->y == xy[2 * i + 1])
        continue;
      op->idx[k] = idx[i];
      op->had[k] = nd->has_position;
      op->xy[4 * k] = nd->x;
      op->xy[4 * k + 1] = nd->y;
      op->xy[4 * k + 2] = xy[2 * i];
      op->xy[4 * k + 3] = xy[2 * i + 1];
      k++;
    }
  if (k == 0)
    {
      _nl_doc_op_free (op);
      return;
    }
  /* a partial set must not merge with a later move of the full set */
  op->is_move = is_move && k == n;
  op->n = k;
  _nl_doc_op_apply (doc, op, TRUE);
  _nl_doc_record (doc, op);
}

void
nl_network_doc_move_nodes (NlNetworkDoc *doc, const int *nodes, int n, double dx, double dy)
{
  g_autofree int *s = NULL;
  g_autofree double *xy = NULL;
  g_autofree char *what = NULL;
  g_autofree char *label = NULL;
  int m;

  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  g_return_if_fail (n == 0 || nodes != NULL);
  g_return_if_fail (_nl_doc_all_valid (doc, nodes, n));
  s = _nl_doc_sort_unique (doc, nodes, n, &m);
  if (m == 0 || (dx == 0 && dy == 0))
    return;
  xy = g_new (double, 2 * m);
  for (int i = 0; i < m; i++)
    {
      NlNode *nd = nl_network_node (doc->net, s[i]);
      xy[2 * i] = nd->x + dx;
      xy[2 * i + 1] = nd->y + dy;
    }
  what = _nl_doc_describe (doc, s, m);
  label = g_strdup_printf (_("Move %s"), what);
  nl_network_doc_begin_group (doc, label);
  _nl_doc_set_positions (doc, s, m, xy, TRUE);
  nl_network_doc_end_group (doc);
}

void
nl_network_doc_set_positions (NlNetworkDoc *doc, const int *nodes, int n, const double *xy)
{
  g_autofree char *label = NULL;

  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  g_return_if_fail (n == 0 || (nodes != NULL && xy != NULL));
  g_return_if_fail (_nl_doc_all_valid (doc, nodes, n));
  if (n == 0)
    return;
  label = n == 1 ? g_strdup_printf (_("Move %s"), nl_network_node (doc->net, nodes[0])->id)
                 : g_strdup_printf (ngettext ("Move %d layer", "Move %d layers", n), n);
  nl_network_doc_begin_group (doc, label);
  _nl_doc_set_positions (doc, nodes, n, xy, FALSE);
  nl_network_doc_end_group (doc);
}

/* Successor lists in CSR form: the successors of v are
 * succ[first[v] .. first[v + 1] - 1]. */
void
_nl_doc_build_succ (const NlNetwork *net, int **first_out, int **succ_out)
{
  int nn = nl_network_n_nodes (net), ne = net->edges->len;
  int *first = g_new0 (int, nn + 1);
  int *succ = g_new (int, MAX (ne, 1));
  g_autofree int *fill = NULL;
  const NlEdge *e = (const NlEdge *) net->edges->data;

  for (int i = 0; i < ne; i++)
    first[e[i].from + 1]++;
  for (int i = 0; i < nn; i++)
    first[i + 1] += first[i];
  fill = g_memdup2 (first, sizeof (int) * (nn + 1));
  for (int i = 0; i < ne; i++)
    succ[fill[e[i].from]++] = e[i].to;
  *first_out = first;
  *succ_out = succ;
}

/* TRUE when `target` can be reached from `start` along edges. */
static gboolean
reaches (const NlNetwork *net, int start, int target)
{
  int nn = nl_network_n_nodes (net), top = 0;
  g_autofree int *first = NULL;
  g_autofree int *succ = NULL;
  g_autofree int *stack = g_new (int, nn);
  g_autofree gboolean *seen = g_new0 (gboolean, nn);

  _nl_doc_build_succ (net, &first, &succ);
  stack[top++] = start;
  seen[start] = TRUE;
  while (top > 0)
    {
      int v = stack[--top];
      if (v == target)
        return TRUE;
      for (int k = first[v]; k < first[v + 1]; k++)
        if (!seen[succ[k]])
          {
            seen[succ[k]] = TRUE;
            stack[top++] = succ[k];
          }
    }
  return FALSE;
}

gboolean
nl_network_doc_can_connect (NlNetworkDoc *doc, int from, int from_port, int to, int to_port, GError **error)
{
  const NlNetwork *net;
  NlNode *src, *dst;
  int max_in;

  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), FALSE);
  net = doc->net;
  if (from < 0 || from >= nl_network_n_nodes (net) || to < 0 || to >= nl_network_n_nodes (net))
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE, _("there is no layer number %d"),
                   (from < 0 || from >= nl_network_n_nodes (net)) ? from : to);
      return FALSE;
    }
  src = nl_network_node (net, from);
  dst = nl_network_node (net, to);
  if (from == to)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_CYCLE, _("%s cannot be connected to itself"), src->id);
      return FALSE;
    }
  if (from_port < 0 || from_port >= src->def->n_outputs)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE, "%s has %d output%s; there is no output %d",
                   src->id, src->def->n_outputs, src->def->n_outputs == 1 ? "" : "s", from_port);
      return FALSE;
    }
  if (strcmp (dst->def->name, "Input") == 0)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE,
                   _("%s is an Input: nothing can be connected into it"), dst->id);
      return FALSE;
    }
  max_in = dst->def->variadic ? NL_MAX_PORTS : dst->def->n_inputs;
  if (to_port < 0 || to_port >= max_in)
    {
      if (dst->def->variadic)
        g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE,
                     _("%s takes at most %d inputs; there is no input %d"), dst->id, max_in, to_port);
      else
        g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE, "%s has %d input%s; there is no input %d",
                     dst->id, max_in, max_in == 1 ? "" : "s", to_port);
      return FALSE;
    }
  for (guint i = 0; i < net->edges->len; i++)
    {
      const NlEdge *e = &g_array_index (net->edges, NlEdge, i);
      if (e->to == to && e->to_port == to_port)
        {
          const char *port_name = dst->def->inputs[dst->def->variadic ? 0 : to_port];
          g_autofree char *which = dst->def->variadic ? g_strdup_printf (_(" (port %d)"), to_port) : g_strdup ("");
          g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE,
                       _("%s's input '%s'%s is already connected to %s"), dst->id, port_name, which,
                       nl_network_node (net, e->from)->id);
          return FALSE;
        }
    }
  if (reaches (net, to, from))
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_CYCLE, _("connecting %s to %s would make a cycle"),
                   src->id, dst->id);
      return FALSE;
    }
  return TRUE;
}

int
nl_network_doc_free_input_port (NlNetworkDoc *doc, int node)
{
  const NlNode *nd;
  guint32 taken = 0;
  int max_in;

  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), -1);
  g_return_val_if_fail (node >= 0 && node < nl_network_n_nodes (doc->net), -1);
  G_STATIC_ASSERT (NL_MAX_PORTS <= 32);
  nd = nl_network_node (doc->net, node);
  if (strcmp (nd->def->name, "Input") == 0)
    return -1;
  max_in = nd->def->variadic ? NL_MAX_PORTS : nd->def->n_inputs;
  for (guint i = 0; i < doc->net->edges->len; i++)
    {
      const NlEdge *e = &g_array_index (doc->net->edges, NlEdge, i);
      if (e->to == node && e->to_port >= 0 && e->to_port < max_in)
        taken |= 1u << e->to_port;
    }
  for (int p = 0; p < max_in; p++)
    if (!(taken & (1u << p)))
      return p;
  return -1;
}

gboolean
nl_network_doc_connect (NlNetworkDoc *doc, int from, int from_port, int to, int to_port, GError **error)
{
  g_autofree char *label = NULL;
  NlEdge e = { from, from_port, to, to_port };
  Op *op;

  if (!nl_network_doc_can_connect (doc, from, from_port, to, to_port, error))
    return FALSE;
  label = g_strdup_printf (_("Connect %s to %s"), nl_network_node (doc->net, from)->id,
                           nl_network_node (doc->net, to)->id);
  nl_network_doc_begin_group (doc, label);
  op = _nl_doc_op_new (OP_EDGES, 1);
  op->add = TRUE;
  op->idx[0] = doc->net->edges->len;
  op->edges = g_memdup2 (&e, sizeof e);
  _nl_doc_op_apply (doc, op, TRUE);
  _nl_doc_record (doc, op);
  nl_network_doc_end_group (doc);
  return TRUE;
}

void
nl_network_doc_disconnect (NlNetworkDoc *doc, int edge)
{
  g_autofree char *label = NULL;
  NlEdge e;
  Op *op;

  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  g_return_if_fail (edge >= 0 && edge < (int) doc->net->edges->len);
  e = g_array_index (doc->net->edges, NlEdge, edge);
  label = g_strdup_printf (_("Disconnect %s from %s"), nl_network_node (doc->net, e.from)->id,
                           nl_network_node (doc->net, e.to)->id);
  nl_network_doc_begin_group (doc, label);
  op = _nl_doc_op_new (OP_EDGES, 1);
  op->idx[0] = edge;
  op->edges = g_new (NlEdge, 1);
  _nl_doc_op_apply (doc, op, TRUE);
  _nl_doc_record (doc, op);
  nl_network_doc_end_group (doc);
}

/* nl_network_set_param parses but does not check ranges (that is
 * nl_params_validate, in ops/, which the UI may not include); this mirrors
 * its check for the one parameter. */
static gboolean
param_in_range (const NlNode *nd, int k, GError **error)
{
  const NlParamSpec *s = &nd->def->params[k];
  const NlParamValue *v = &nd->params[k];
  gboolean ok = TRUE;

#define IN_RANGE(x) (s->min > s->max || ((x) >= s->min && (x) <= s->max))
  switch (s->type)
    {
    case NL_PARAM_INT:
      ok = IN_RANGE ((double) v->i);
      break;
    case NL_PARAM_FLOAT:
      ok = isfinite (v->f) && IN_RANGE (v->f);
      break;
    case NL_PARAM_INT2:
    case NL_PARAM_SHAPE:
      for (int j = 0; j < v->n; j++)
        ok = ok && IN_RANGE ((double) v->v[j]);
      break;
    case NL_PARAM_BOOL:
    case NL_PARAM_ENUM:
      break;
    }
#undef IN_RANGE
  if (ok)
    return TRUE;
  if (s->min > s->max)
    g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARAM,
                 _("node '%s': %s parameter '%s' must be a finite number"),
                 nd->id, nd->def->name, s->name);
  else if (s->max >= 1e15)
    g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARAM,
                 _("node '%s': %s parameter '%s' is out of range (must be >= %g)"), nd->id, nd->def->name, s->name,
                 s->min);
  else
    g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARAM,
                 _("node '%s': %s parameter '%s' is out of range (must be in [%g, %g])"), nd->id, nd->def->name,
                 s->name, s->min, s->max);
  return FALSE;
}

gboolean
nl_network_doc_set_param (NlNetworkDoc *doc, int node, const char *name, const char *value, GError **error)
{
  g_autofree char *label = NULL;
  NlParamValue old;
  NlNode *nd;
  Op *op;
  int k = -1;

  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), FALSE);
  g_return_val_if_fail (node >= 0 && node < nl_network_n_nodes (doc->net), FALSE);
  g_return_val_if_fail (name != NULL && value != NULL, FALSE);
  nd = nl_network_node (doc->net, node);
  for (int i = 0; i < nd->def->n_params && k < 0; i++)
    if (strcmp (nd->def->params[i].name, name) == 0)
      k = i;
  if (k < 0)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARAM, _("node '%s': %s has no parameter '%s'"), nd->id,
                   nd->def->name, name);
      return FALSE;
    }
  old = nd->params[k];
  /* a refused value may have been half written: put the old one back */
  if (!nl_network_set_param (doc->net, node, name, value, error) || !param_in_range (nd, k, error))
    {
      nd->params[k] = old;
      return FALSE;
    }
  if (memcmp (&old, &nd->params[k], sizeof old) == 0)
    return TRUE;
  label = g_strdup_printf (_("Change %s of %s"), name, nd->id);
  nl_network_doc_begin_group (doc, label);
  op = _nl_doc_op_new (OP_PARAM, 0);
  op->node = node;
  op->param = k;
  op->old_v = old;
  op->new_v = nd->params[k];
  _nl_doc_record (doc, op);
  nl_network_doc_end_group (doc);
  return TRUE;
}

static gboolean
valid_id (const char *id)
{
  if (!id || !*id)
    return FALSE;
  /* not '-': the network reader takes "a->b" apart at "->" and refuses it */
  for (const char *p = id; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '.')
      return FALSE;
  return TRUE;
}

gboolean
nl_network_doc_rename_node (NlNetworkDoc *doc, int node, const char *id, GError **error)
{
  g_autofree char *label = NULL;
  NlNode *nd;
  int other;
  Op *op;

  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), FALSE);
  g_return_val_if_fail (node >= 0 && node < nl_network_n_nodes (doc->net), FALSE);
  nd = nl_network_node (doc->net, node);
  if (!id || !*id)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE, _("%s needs a name"), nd->id);
      return FALSE;
    }
  if (!valid_id (id))
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                   _("'%s' is not a valid layer name (use letters, digits, '_' or '.')"), id);
      return FALSE;
    }
  if (strcmp (nd->id, id) == 0)
    return TRUE;
  other = nl_network_find (doc->net, id);
  if (other >= 0)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                   _("cannot rename %s to '%s': another layer (%s) has that name"), nd->id, id,
                   nl_network_node (doc->net, other)->def->name);
      return FALSE;
    }
  label = g_strdup_printf (_("Rename %s to %s"), nd->id, id);
  nl_network_doc_begin_group (doc, label);
  op = _nl_doc_op_new (OP_RENAME, 0);
  op->node = node;
  op->old_s = g_strdup (nd->id);
  op->new_s = g_strdup (id);
  _nl_doc_op_apply (doc, op, TRUE);
  _nl_doc_record (doc, op);
  nl_network_doc_end_group (doc);
  return TRUE;
}

