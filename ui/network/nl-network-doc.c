/* nl-network-doc.c — the edited network: the object, undo/redo history,
 * the primitive operations and the selection (the edits are in
 * nl-network-doc-edit.c, copy/paste in nl-network-doc-clipboard.c).
 *
 * Undo stores inverse operations, not snapshots: a deep copy of a
 * 5000-node network per step would cost milliseconds and megabytes (200
 * steps of it, hundreds of MB). A step is a list of primitive operations
 * (insert/remove nodes or edges at given indices, set positions, set one
 * parameter, rename); undo applies their inverses in reverse order, redo
 * replays them. Node and edge indices in an operation are those of the
 * network at the moment it runs, which undo/redo reproduce exactly. */
#include "ui/network/nl-network-doc-private.h"
#include <glib/gi18n.h>

#include <string.h>

G_DEFINE_FINAL_TYPE (NlNetworkDoc, nl_network_doc, G_TYPE_OBJECT)

enum { SIG_CHANGED, SIG_SELECTION_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- nodes, ops, steps ---- */

void
_nl_doc_node_free (NlNode *n)
{
  /* the same allocation as engine/graph/nl-network.c's nodes */
  if (!n)
    return;
  g_free (n->id);
  g_free (n->params);
  g_free (n);
}

NlNode *
_nl_doc_node_copy (const NlNode *n)
{
  NlNode *m = g_new0 (NlNode, 1);
  *m = *n;
  m->id = g_strdup (n->id);
  m->params = g_memdup2 (n->params, sizeof (NlParamValue) * MAX (n->def->n_params, 1));
  return m;
}

void
_nl_doc_op_free (gpointer p)
{
  Op *op = p;
  if (op->nodes)
    for (int i = 0; i < op->n; i++)
      _nl_doc_node_free (op->nodes[i]);
  g_free (op->nodes);
  g_free (op->idx);
  g_free (op->edges);
  g_free (op->xy);
  g_free (op->had);
  g_free (op->old_s);
  g_free (op->new_s);
  g_free (op);
}

static void
step_free (gpointer p)
{
  Step *s = p;
  g_free (s->label);
  g_ptr_array_unref (s->ops);
  g_free (s->sel_before);
  g_free (s->sel_after);
  g_free (s);
}

static int
nl_doc_cmp_int (const void *a, const void *b)
{
  int x = *(const int *) a, y = *(const int *) b;
  return (x > y) - (x < y);
}

/* Sorted unique copy of nodes[] (valid indices only); *m receives the count. */
int *
_nl_doc_sort_unique (const NlNetworkDoc *doc, const int *nodes, int n, int *m)
{
  int *s = g_new (int, MAX (n, 1));
  int k = 0, nn = nl_network_n_nodes (doc->net);
  for (int i = 0; i < n; i++)
    if (nodes[i] >= 0 && nodes[i] < nn)
      s[k++] = nodes[i];
  qsort (s, k, sizeof (int), nl_doc_cmp_int);
  *m = 0;
  for (int i = 0; i < k; i++)
    if (*m == 0 || s[*m - 1] != s[i])
      s[(*m)++] = s[i];
  return s;
}

gboolean
_nl_doc_all_valid (const NlNetworkDoc *doc, const int *nodes, int n)
{
  for (int i = 0; i < n; i++)
    if (nodes[i] < 0 || nodes[i] >= nl_network_n_nodes (doc->net))
      return FALSE;
  return TRUE;
}

/* "conv1" for one node, "3 layers" for several */
char *
_nl_doc_describe (const NlNetworkDoc *doc, const int *sorted, int n)
{
  if (n == 1)
    return g_strdup (nl_network_node (doc->net, sorted[0])->id);
  return g_strdup_printf (ngettext ("%d layer", "%d layers", n), n);
}

/* ---- selection ---- */

static gboolean
nl_doc_sel_equal (const NlNetworkDoc *doc, const int *s, int n)
{
  return (int) doc->sel->len == n && (n == 0 || memcmp (doc->sel->data, s, sizeof (int) * n) == 0);
}

int *
_nl_doc_sel_dup (const NlNetworkDoc *doc, int *n)
{
  *n = doc->sel->len;
  return g_memdup2 (doc->sel->data, sizeof (int) * MAX (*n, 1));
}

/* Emits ::selection-changed when the selection differs from old[]. */
void
_nl_doc_sel_notify (NlNetworkDoc *doc, const int *old, int n_old)
{
  if (!nl_doc_sel_equal (doc, old, n_old))
    g_signal_emit (doc, signals[SIG_SELECTION_CHANGED], 0);
}

static void
nl_doc_sel_set_sorted (NlNetworkDoc *doc, const int *s, int n)
{
  g_array_set_size (doc->sel, 0);
  g_array_append_vals (doc->sel, s, n);
}

/* ---- primitive operations on the network ---- */

/* After nodes moved, old index i is now map[i] (-1: removed). */
static void
remap (NlNetworkDoc *doc, const int *map)
{
  guint k = 0;
  for (guint i = 0; i < doc->net->edges->len; i++)
    {
      NlEdge *e = &g_array_index (doc->net->edges, NlEdge, i);
      g_assert (map[e->from] >= 0 && map[e->to] >= 0);
      e->from = map[e->from];
      e->to = map[e->to];
    }
  for (guint i = 0; i < doc->sel->len; i++)
    {
      int v = map[g_array_index (doc->sel, int, i)];
      if (v >= 0)
        g_array_index (doc->sel, int, k++) = v;
    }
  g_array_set_size (doc->sel, k);
}

/* Puts nodes[j] at final index idx[j] (ascending); the array gives them up. */
void
_nl_doc_nodes_insert (NlNetworkDoc *doc, const int *idx, NlNode **nodes, int n)
{
  GPtrArray *a = doc->net->nodes;
  int old_n = a->len, src = old_n - 1, k = n - 1;
  g_autofree int *map = g_new (int, old_n + 1);

  for (int j = 0; j < n; j++)
    g_ptr_array_add (a, NULL);
  for (int dst = old_n + n - 1; dst >= 0; dst--)
    {
      if (k >= 0 && idx[k] == dst)
        {
          a->pdata[dst] = nodes[k];
          nodes[k--] = NULL;
        }
      else
        {
          map[src] = dst;
          a->pdata[dst] = a->pdata[src--];
        }
    }
  remap (doc, map);
}

/* Takes the nodes at idx[] (ascending; no edge may touch them) out into nodes[]. */
void
_nl_doc_nodes_remove (NlNetworkDoc *doc, const int *idx, NlNode **nodes, int n)
{
  GPtrArray *a = doc->net->nodes;
  int old_n = a->len, k = 0, dst = 0;
  g_autofree int *map = g_new (int, old_n + 1);

  for (int src = 0; src < old_n; src++)
    {
      if (k < n && idx[k] == src)
        {
          nodes[k++] = a->pdata[src];
          map[src] = -1;
        }
      else
        {
          map[src] = dst;
          a->pdata[dst++] = a->pdata[src];
        }
    }
  /* the tail now holds stale pointers: drop them without the free func */
  for (int j = 0; j < n; j++)
    g_ptr_array_steal_index (a, a->len - 1);
  remap (doc, map);
}

void
_nl_doc_edges_insert (NlNetworkDoc *doc, const int *idx, const NlEdge *edges, int n)
{
  GArray *a = doc->net->edges;
  int old_n = a->len, src = old_n - 1, k = n - 1;
  NlEdge *d;

  g_array_set_size (a, old_n + n);
  d = (NlEdge *) a->data;
  for (int dst = old_n + n - 1; dst >= 0; dst--)
    d[dst] = (k >= 0 && idx[k] == dst) ? edges[k--] : d[src--];
}

void
_nl_doc_edges_remove (NlNetworkDoc *doc, const int *idx, NlEdge *edges, int n)
{
  GArray *a = doc->net->edges;
  NlEdge *d = (NlEdge *) a->data;
  int k = 0, dst = 0, old_n = a->len;

  for (int src = 0; src < old_n; src++)
    {
      if (k < n && idx[k] == src)
        edges[k++] = d[src];
      else
        d[dst++] = d[src];
    }
  g_array_set_size (a, dst);
}

void
_nl_doc_op_apply (NlNetworkDoc *doc, Op *op, gboolean forward)
{
  gboolean insert = op->add == forward;
  switch (op->kind)
    {
    case OP_NODES:
      if (insert)
        _nl_doc_nodes_insert (doc, op->idx, op->nodes, op->n);
      else
        _nl_doc_nodes_remove (doc, op->idx, op->nodes, op->n);
      break;
    case OP_EDGES:
      if (insert)
        _nl_doc_edges_insert (doc, op->idx, op->edges, op->n);
      else
        _nl_doc_edges_remove (doc, op->idx, op->edges, op->n);
      break;
    case OP_POSITIONS:
      for (int i = 0; i < op->n; i++)
        {
          NlNode *nd = nl_network_node (doc->net, op->idx[i]);
          nd->x = op->xy[4 * i + (forward ? 2 : 0)];
          nd->y = op->xy[4 * i + (forward ? 3 : 1)];
          nd->has_position = forward ? TRUE : op->had[i];
        }
      break;
    case OP_PARAM:
      nl_network_node (doc->net, op->node)->params[op->param] = forward ? op->new_v : op->old_v;
      break;
    case OP_RENAME:
      {
        NlNode *nd = nl_network_node (doc->net, op->node);
        g_free (nd->id);
        nd->id = g_strdup (forward ? op->new_s : op->old_s);
      }
      break;
    case OP_NAME:
      g_free (doc->net->name);
      doc->net->name = g_strdup (forward ? op->new_s : op->old_s);
      break;
    }
}

/* ---- steps and groups ---- */

static guint64
current_serial (const NlNetworkDoc *doc)
{
  if (doc->undo->len == 0)
    return doc->base_serial;
  return ((Step *) g_ptr_array_index (doc->undo, doc->undo->len - 1))->serial;
}

static void
clear_history (NlNetworkDoc *doc)
{
  g_ptr_array_set_size (doc->undo, 0);
  g_ptr_array_set_size (doc->redo, 0);
  g_clear_pointer (&doc->pending, step_free);
  doc->depth = 0;
}

void
nl_network_doc_begin_group (NlNetworkDoc *doc, const char *label)
{
  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  if (doc->depth++ == 0)
    {
      doc->pending = g_new0 (Step, 1);
      doc->pending->ops = g_ptr_array_new_with_free_func (_nl_doc_op_free);
      doc->pending->sel_before = _nl_doc_sel_dup (doc, &doc->pending->n_before);
    }
  /* the outermost label wins; an unlabelled group takes its first edit's */
  if (label && !doc->pending->label)
    doc->pending->label = g_strdup (label);
}

void
nl_network_doc_end_group (NlNetworkDoc *doc)
{
  Step *s;

  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  g_return_if_fail (doc->depth > 0);
  if (--doc->depth > 0)
    return;
  s = g_steal_pointer (&doc->pending);
  if (s->ops->len == 0)
    {
      step_free (s);
      return;
    }
  s->sel_after = _nl_doc_sel_dup (doc, &s->n_after);
  s->serial = ++doc->next_serial;
  if (!s->label)
    s->label = g_strdup (_("Edit"));
  g_ptr_array_add (doc->undo, s);
  g_ptr_array_set_size (doc->redo, 0);
  /* memory stays bounded; the state after a dropped step becomes the base */
  while (doc->undo->len > NL_DOC_MAX_UNDO)
    {
      doc->base_serial = ((Step *) g_ptr_array_index (doc->undo, 0))->serial;
      g_ptr_array_remove_index (doc->undo, 0);
    }
  g_signal_emit (doc, signals[SIG_CHANGED], 0);
}

/* Records an operation already applied to the network. */
void
_nl_doc_record (NlNetworkDoc *doc, Op *op)
{
  g_assert (doc->pending != NULL);
  g_ptr_array_add (doc->pending->ops, op);
}

Op *
_nl_doc_op_new (OpKind kind, int n)
{
  Op *op = g_new0 (Op, 1);
  op->kind = kind;
  op->n = n;
  op->idx = g_new0 (int, MAX (n, 1));
  return op;
}

gboolean
nl_network_doc_can_undo (NlNetworkDoc *doc)
{
  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), FALSE);
  return doc->undo->len > 0;
}

gboolean
nl_network_doc_can_redo (NlNetworkDoc *doc)
{
  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), FALSE);
  return doc->redo->len > 0;
}

const char *
nl_network_doc_get_undo_label (NlNetworkDoc *doc)
{
  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), NULL);
  return doc->undo->len ? ((Step *) g_ptr_array_index (doc->undo, doc->undo->len - 1))->label : NULL;
}

const char *
nl_network_doc_get_redo_label (NlNetworkDoc *doc)
{
  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), NULL);
  return doc->redo->len ? ((Step *) g_ptr_array_index (doc->redo, doc->redo->len - 1))->label : NULL;
}

static void
undo_redo (NlNetworkDoc *doc, GPtrArray *from, GPtrArray *to, gboolean forward)
{
  Step *s = g_ptr_array_steal_index (from, from->len - 1);
  int n_old;
  g_autofree int *old = _nl_doc_sel_dup (doc, &n_old);

  if (forward)
    for (guint i = 0; i < s->ops->len; i++)
      _nl_doc_op_apply (doc, g_ptr_array_index (s->ops, i), TRUE);
  else
    for (guint i = s->ops->len; i-- > 0;)
      _nl_doc_op_apply (doc, g_ptr_array_index (s->ops, i), FALSE);
  if (forward)
    nl_doc_sel_set_sorted (doc, s->sel_after, s->n_after);
  else
    nl_doc_sel_set_sorted (doc, s->sel_before, s->n_before);
  g_ptr_array_add (to, s);
  g_signal_emit (doc, signals[SIG_CHANGED], 0);
  _nl_doc_sel_notify (doc, old, n_old);
}

void
nl_network_doc_undo (NlNetworkDoc *doc)
{
  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  g_return_if_fail (doc->depth == 0);
  if (doc->undo->len > 0)
    undo_redo (doc, doc->undo, doc->redo, FALSE);
}

void
nl_network_doc_redo (NlNetworkDoc *doc)
{
  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  g_return_if_fail (doc->depth == 0);
  if (doc->redo->len > 0)
    undo_redo (doc, doc->redo, doc->undo, TRUE);
}

gboolean
nl_network_doc_is_modified (NlNetworkDoc *doc)
{
  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), FALSE);
  return current_serial (doc) != doc->saved_serial;
}

void
nl_network_doc_mark_saved (NlNetworkDoc *doc)
{
  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  doc->saved_serial = current_serial (doc);
}

/* ---- the document ---- */

static void
nl_network_doc_finalize (GObject *object)
{
  NlNetworkDoc *doc = NL_NETWORK_DOC (object);
  clear_history (doc);
  g_ptr_array_unref (doc->undo);
  g_ptr_array_unref (doc->redo);
  g_array_unref (doc->sel);
  nl_network_free (doc->net);
  G_OBJECT_CLASS (nl_network_doc_parent_class)->finalize (object);
}

static void
nl_network_doc_class_init (NlNetworkDocClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = nl_network_doc_finalize;
  signals[SIG_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                       NULL, G_TYPE_NONE, 0);
  signals[SIG_SELECTION_CHANGED] = g_signal_new ("selection-changed", G_TYPE_FROM_CLASS (klass),
                                                 G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
nl_network_doc_init (NlNetworkDoc *doc)
{
  doc->undo = g_ptr_array_new_with_free_func (step_free);
  doc->redo = g_ptr_array_new_with_free_func (step_free);
  doc->sel = g_array_new (FALSE, FALSE, sizeof (int));
  doc->net = nl_network_new ("untitled");
}

NlNetworkDoc *
nl_network_doc_new (NlNetwork *net)
{
  NlNetworkDoc *doc = g_object_new (NL_TYPE_NETWORK_DOC, NULL);
  if (net)
    {
      nl_network_free (doc->net);
      doc->net = net;
    }
  return doc;
}

const NlNetwork *
nl_network_doc_get_network (NlNetworkDoc *doc)
{
  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), NULL);
  return doc->net;
}

void
nl_network_doc_set_network (NlNetworkDoc *doc, NlNetwork *net)
{
  gboolean had_sel;

  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  clear_history (doc);
  nl_network_free (doc->net);
  doc->net = net ? net : nl_network_new ("untitled");
  had_sel = doc->sel->len > 0;
  g_array_set_size (doc->sel, 0);
  doc->base_serial = doc->saved_serial = ++doc->next_serial;
  g_signal_emit (doc, signals[SIG_CHANGED], 0);
  if (had_sel)
    g_signal_emit (doc, signals[SIG_SELECTION_CHANGED], 0);
}

const char *
nl_network_doc_get_name (NlNetworkDoc *doc)
{
  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), NULL);
  return doc->net->name;
}

void
nl_network_doc_set_name (NlNetworkDoc *doc, const char *name)
{
  Op *op;

  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  g_return_if_fail (name != NULL);
  if (g_strcmp0 (doc->net->name, name) == 0)
    return;
  nl_network_doc_begin_group (doc, _("Rename network"));
  op = _nl_doc_op_new (OP_NAME, 0);
  op->old_s = g_strdup (doc->net->name);
  op->new_s = g_strdup (name);
  _nl_doc_op_apply (doc, op, TRUE);
  _nl_doc_record (doc, op);
  nl_network_doc_end_group (doc);
}

/* ---- selection ---- */

void
nl_network_doc_select (NlNetworkDoc *doc, const int *nodes, int n)
{
  g_autofree int *s = NULL;
  int m;

  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  g_return_if_fail (n == 0 || nodes != NULL);
  g_return_if_fail (_nl_doc_all_valid (doc, nodes, n));
  s = _nl_doc_sort_unique (doc, nodes, n, &m);
  if (nl_doc_sel_equal (doc, s, m))
    return;
  nl_doc_sel_set_sorted (doc, s, m);
  g_signal_emit (doc, signals[SIG_SELECTION_CHANGED], 0);
}

void
nl_network_doc_select_all (NlNetworkDoc *doc)
{
  int nn;
  g_autofree int *all = NULL;

  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  nn = nl_network_n_nodes (doc->net);
  all = g_new (int, MAX (nn, 1));
  for (int i = 0; i < nn; i++)
    all[i] = i;
  nl_network_doc_select (doc, all, nn);
}

const int *
nl_network_doc_get_selection (NlNetworkDoc *doc, int *n)
{
  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), NULL);
  if (n)
    *n = doc->sel->len;
  return (const int *) doc->sel->data;
}

gboolean
nl_network_doc_is_selected (NlNetworkDoc *doc, int node)
{
  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), FALSE);
  return doc->sel->len > 0 && bsearch (&node, doc->sel->data, doc->sel->len, sizeof (int), nl_doc_cmp_int) != NULL;
}

