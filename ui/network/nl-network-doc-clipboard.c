/* nl-network-doc-clipboard.c — copy (a netloom.network document of some
 * nodes and the edges among them), paste (colliding ids renamed, one undo
 * step, the pasted nodes selected) and duplicate. */
#include "ui/network/nl-network-doc-private.h"
#include <glib/gi18n.h>

#include <string.h>

#define DUPLICATE_OFFSET 32.0

char *
nl_network_doc_copy_json (NlNetworkDoc *doc, const int *nodes, int n)
{
  g_autoptr (NlNetwork) sub = NULL;
  g_autofree int *s = NULL;
  g_autofree int *map = NULL;
  int m, nn;

  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), NULL);
  g_return_val_if_fail (n == 0 || nodes != NULL, NULL);
  nn = nl_network_n_nodes (doc->net);
  s = _nl_doc_sort_unique (doc, nodes, n, &m);
  map = g_new (int, MAX (nn, 1));
  for (int i = 0; i < nn; i++)
    map[i] = -1;
  sub = nl_network_new (doc->net->name);
  for (int i = 0; i < m; i++)
    {
      map[s[i]] = i;
      g_ptr_array_add (sub->nodes, _nl_doc_node_copy (nl_network_node (doc->net, s[i])));
    }
  for (guint i = 0; i < doc->net->edges->len; i++)
    {
      NlEdge e = g_array_index (doc->net->edges, NlEdge, i);
      if (map[e.from] < 0 || map[e.to] < 0)
        continue;
      e.from = map[e.from];
      e.to = map[e.to];
      g_array_append_val (sub->edges, e);
    }
  return nl_network_to_json (sub);
}

/* A node on (or behind) a cycle of net, or -1 (Kahn's algorithm). */
static int
find_cycle (const NlNetwork *net)
{
  int nn = nl_network_n_nodes (net), head = 0, tail = 0;
  g_autofree int *indeg = g_new0 (int, nn + 1);
  g_autofree int *queue = g_new (int, nn + 1);
  g_autofree int *first = NULL;
  g_autofree int *succ = NULL;

  _nl_doc_build_succ (net, &first, &succ);
  for (guint i = 0; i < net->edges->len; i++)
    indeg[g_array_index (net->edges, NlEdge, i).to]++;
  for (int i = 0; i < nn; i++)
    if (indeg[i] == 0)
      queue[tail++] = i;
  while (head < tail)
    {
      int v = queue[head++];
      for (int k = first[v]; k < first[v + 1]; k++)
        if (--indeg[succ[k]] == 0)
          queue[tail++] = succ[k];
    }
  for (int i = 0; i < nn && tail < nn; i++)
    if (indeg[i] > 0)
      return i;
  return -1;
}

/* conv1 -> conv1_2, conv1_3 ...; conv2d_2 -> conv2d_3 ... */
static char *
fresh_id (const char *id, GHashTable *taken)
{
  const char *us = strrchr (id, '_');
  g_autofree char *base = NULL;

  if (us && us[1] && strspn (us + 1, "0123456789") == strlen (us + 1))
    base = g_strndup (id, us - id);
  else
    base = g_strdup (id);
  for (int k = 2;; k++)
    {
      char *c = g_strdup_printf ("%s_%d", base, k);
      if (!g_hash_table_contains (taken, c))
        return c;
      g_free (c);
    }
}

gboolean
nl_network_doc_paste_json (NlNetworkDoc *doc, const char *json, double dx, double dy, GError **error)
{
  g_autoptr (NlNetwork) tmp = NULL;
  g_autoptr (GError) local = NULL;
  g_autoptr (GHashTable) live = NULL;
  g_autoptr (GHashTable) taken = NULL;
  g_autofree int *old_sel = NULL;
  g_autofree char *label = NULL;
  int n_old, nn, k, cyc;
  gsize len = 0;
  Op *op;

  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), FALSE);
  g_return_val_if_fail (json != NULL, FALSE);
  /* the reader does not validate structure, so partial graphs load */
  tmp = nl_network_load_data (json, -1, &local);
  if (!tmp)
    {
      g_set_error (error, NL_NETWORK_ERROR, local->code, _("cannot paste: %s"), local->message);
      return FALSE;
    }
  k = nl_network_n_nodes (tmp);
  if (k == 0)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE, _("cannot paste: there are no layers in it"));
      return FALSE;
    }
  cyc = find_cycle (tmp);
  if (cyc >= 0)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_CYCLE,
                   _("cannot paste: the layers form a cycle through %s"),
                   nl_network_node (tmp, cyc)->id);
      return FALSE;
    }

  nn = nl_network_n_nodes (doc->net);
  live = g_hash_table_new (g_str_hash, g_str_equal);
  taken = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (int i = 0; i < nn; i++)
    {
      g_hash_table_add (live, nl_network_node (doc->net, i)->id);
      g_hash_table_add (taken, g_strdup (nl_network_node (doc->net, i)->id));
    }
  for (int i = 0; i < k; i++)
    g_hash_table_add (taken, g_strdup (nl_network_node (tmp, i)->id));
  for (int i = 0; i < k; i++)
    {
      NlNode *nd = nl_network_node (tmp, i);
      if (g_hash_table_contains (live, nd->id))
        {
          char *id = fresh_id (nd->id, taken);
          g_hash_table_add (taken, g_strdup (id));
          g_free (nd->id);
          nd->id = id;
        }
      if (nd->has_position)
        nd->x += dx, nd->y += dy;
    }

  label = k == 1 ? g_strdup_printf (_("Paste %s"), nl_network_node (tmp, 0)->id)
                 : g_strdup_printf (ngettext ("Paste %d layer", "Paste %d layers", k), k);
  old_sel = _nl_doc_sel_dup (doc, &n_old);
  nl_network_doc_begin_group (doc, label);
  op = _nl_doc_op_new (OP_NODES, k);
  op->add = TRUE;
  op->nodes = (NlNode **) g_ptr_array_steal (tmp->nodes, &len);
  g_assert ((int) len == k);
  for (int i = 0; i < k; i++)
    op->idx[i] = nn + i;
  _nl_doc_nodes_insert (doc, op->idx, op->nodes, k);
  _nl_doc_record (doc, op);
  if (tmp->edges->len > 0)
    {
      int ne = doc->net->edges->len, m = tmp->edges->len;
      op = _nl_doc_op_new (OP_EDGES, m);
      op->add = TRUE;
      op->edges = g_new (NlEdge, m);
      for (int i = 0; i < m; i++)
        {
          NlEdge e = g_array_index (tmp->edges, NlEdge, i);
          e.from += nn;
          e.to += nn;
          op->edges[i] = e;
          op->idx[i] = ne + i;
        }
      _nl_doc_op_apply (doc, op, TRUE);
      _nl_doc_record (doc, op);
    }
  g_array_set_size (doc->sel, 0);
  for (int i = 0; i < k; i++)
    {
      int v = nn + i;
      g_array_append_val (doc->sel, v);
    }
  _nl_doc_sel_notify (doc, old_sel, n_old);
  nl_network_doc_end_group (doc);
  return TRUE;
}

gboolean
nl_network_doc_duplicate_selection (NlNetworkDoc *doc, GError **error)
{
  g_autofree char *json = NULL;
  g_autofree char *what = NULL;
  g_autofree char *label = NULL;
  gboolean ok;

  g_return_val_if_fail (NL_IS_NETWORK_DOC (doc), FALSE);
  if (doc->sel->len == 0)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE, _("select the layers to duplicate first"));
      return FALSE;
    }
  json = nl_network_doc_copy_json (doc, (const int *) doc->sel->data, doc->sel->len);
  what = _nl_doc_describe (doc, (const int *) doc->sel->data, doc->sel->len);
  label = g_strdup_printf (_("Duplicate %s"), what);
  nl_network_doc_begin_group (doc, label);
  ok = nl_network_doc_paste_json (doc, json, DUPLICATE_OFFSET, DUPLICATE_OFFSET, error);
  nl_network_doc_end_group (doc);
  return ok;
}

