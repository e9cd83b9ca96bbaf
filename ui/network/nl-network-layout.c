/* nl-network-layout.c — layered top-to-bottom auto-layout (Sugiyama style,
 * without dummy nodes): layers by the longest path from the sources, order
 * within a layer by barycentres of the neighbours' centred positions, a few
 * sweeps down and up ending with predecessors. The result depends only on
 * the graph and the anchor (the nodes' current top-left), so running it
 * twice gives the same positions. Linear in nodes + edges per sweep. */
#include "ui/network/nl-network-doc-private.h"
#include <glib/gi18n.h>

#include <string.h>

#define X_SPACING (NL_CARD_WIDTH + 40.0)
#define Y_SPACING (NL_CARD_HEIGHT + 48.0)
#define N_SWEEPS 4

typedef struct {
  double key;
  int pos; /* current position: ties keep the present order */
  int v;
} SortItem;

static int
cmp_item (const void *a, const void *b)
{
  const SortItem *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return (x->pos > y->pos) - (x->pos < y->pos);
}

typedef struct {
  int m, n_layers;
  int *pfirst, *pred;  /* CSR over local indices */
  int *sfirst, *succ;
  int *layer;          /* per node */
  int *lfirst, *order; /* order[lfirst[l] .. lfirst[l + 1] - 1]: layer l, left to right */
  double *c;           /* centred position within the layer */
  SortItem *items;
} Layout;

static void
layout_clear (Layout *L)
{
  g_free (L->pfirst);
  g_free (L->pred);
  g_free (L->sfirst);
  g_free (L->succ);
  g_free (L->layer);
  g_free (L->lfirst);
  g_free (L->order);
  g_free (L->c);
  g_free (L->items);
}

/* CSR lists of the edges among the chosen nodes, both directions. */
static void
build_adjacency (Layout *L, const NlNetwork *net, const int *local)
{
  const NlEdge *e = (const NlEdge *) net->edges->data;
  int ne = net->edges->len;
  g_autofree int *pfill = NULL;
  g_autofree int *sfill = NULL;

  L->pfirst = g_new0 (int, L->m + 1);
  L->sfirst = g_new0 (int, L->m + 1);
  for (int i = 0; i < ne; i++)
    if (local[e[i].from] >= 0 && local[e[i].to] >= 0)
      {
        L->pfirst[local[e[i].to] + 1]++;
        L->sfirst[local[e[i].from] + 1]++;
      }
  for (int i = 0; i < L->m; i++)
    {
      L->pfirst[i + 1] += L->pfirst[i];
      L->sfirst[i + 1] += L->sfirst[i];
    }
  L->pred = g_new (int, MAX (L->pfirst[L->m], 1));
  L->succ = g_new (int, MAX (L->sfirst[L->m], 1));
  pfill = g_memdup2 (L->pfirst, sizeof (int) * (L->m + 1));
  sfill = g_memdup2 (L->sfirst, sizeof (int) * (L->m + 1));
  for (int i = 0; i < ne; i++)
    {
      int a = local[e[i].from], b = local[e[i].to];
      if (a >= 0 && b >= 0)
        {
          L->pred[pfill[b]++] = a;
          L->succ[sfill[a]++] = b;
        }
    }
}

/* Longest path from the sources (Kahn's algorithm). A cycle (a network
 * loaded from a file may have one) is broken at its lowest-index node, so
 * every node gets a layer. The initial order within a layer is the order in
 * which Kahn's algorithm reaches the nodes. */
static void
assign_layers (Layout *L)
{
  int m = L->m, head = 0, tail = 0, done_n = 0, next_forced = 0;
  g_autofree int *indeg = g_new0 (int, m + 1);
  g_autofree int *queue = g_new (int, 2 * m + 1);
  g_autofree gboolean *done = g_new0 (gboolean, m + 1);
  g_autofree int *visit = g_new (int, m + 1);
  g_autofree int *fill = NULL;

  L->layer = g_new0 (int, m + 1);
  for (int v = 0; v < m; v++)
    {
      indeg[v] = L->pfirst[v + 1] - L->pfirst[v];
      if (indeg[v] == 0)
        queue[tail++] = v;
    }
  while (done_n < m)
    {
      int v;
      if (head == tail)
        {
          while (done[next_forced])
            next_forced++;
          queue[tail++] = next_forced;
        }
      v = queue[head++];
      if (done[v])
        continue;
      done[v] = TRUE;
      visit[done_n++] = v;
      for (int k = L->sfirst[v]; k < L->sfirst[v + 1]; k++)
        {
          int w = L->succ[k];
          if (done[w])
            continue;
          L->layer[w] = MAX (L->layer[w], L->layer[v] + 1);
          if (--indeg[w] == 0)
            queue[tail++] = w;
        }
    }
  L->n_layers = 0;
  for (int v = 0; v < m; v++)
    L->n_layers = MAX (L->n_layers, L->layer[v] + 1);
  L->lfirst = g_new0 (int, L->n_layers + 1);
  for (int v = 0; v < m; v++)
    L->lfirst[L->layer[v] + 1]++;
  for (int l = 0; l < L->n_layers; l++)
    L->lfirst[l + 1] += L->lfirst[l];
  fill = g_memdup2 (L->lfirst, sizeof (int) * (L->n_layers + 1));
  L->order = g_new (int, m + 1);
  for (int i = 0; i < m; i++)
    L->order[fill[L->layer[visit[i]]]++] = visit[i];
}

static void
centre_layer (Layout *L, int l)
{
  int a = L->lfirst[l], size = L->lfirst[l + 1] - a;
  for (int i = 0; i < size; i++)
    L->c[L->order[a + i]] = i - (size - 1) / 2.0;
}

/* Reorders layer l by the mean centred position of each node's
 * neighbours (first/adj: predecessors or successors); a node with none
 * keeps its own. */
static void
sort_layer (Layout *L, int l, const int *first, const int *adj)
{
  int a = L->lfirst[l], size = L->lfirst[l + 1] - a;
  for (int i = 0; i < size; i++)
    {
      int v = L->order[a + i], deg = first[v + 1] - first[v];
      double sum = 0;
      for (int k = first[v]; k < first[v + 1]; k++)
        sum += L->c[adj[k]];
      L->items[i] = (SortItem) { deg ? sum / deg : L->c[v], i, v };
    }
  qsort (L->items, size, sizeof (SortItem), cmp_item);
  for (int i = 0; i < size; i++)
    L->order[a + i] = L->items[i].v;
  centre_layer (L, l);
}

void
nl_network_layout_compute (const NlNetwork *net, const int *nodes, int n, double *xy)
{
  int nn, m;
  g_autofree int *local = NULL;
  g_autofree int *all = NULL;
  Layout L = { 0 };
  double ox = 0, oy = 0, cmin = 0;
  gboolean any_pos = FALSE;

  g_return_if_fail (net != NULL && xy != NULL);
  g_return_if_fail (n == 0 || nodes != NULL);
  nn = nl_network_n_nodes (net);
  if (n == 0)
    {
      all = g_new (int, MAX (nn, 1));
      for (int i = 0; i < nn; i++)
        all[i] = i;
      nodes = all;
      n = nn;
    }
  m = n;
  if (m == 0)
    return;
  local = g_new (int, MAX (nn, 1));
  for (int i = 0; i < nn; i++)
    local[i] = -1;
  for (int i = 0; i < m; i++)
    {
      const NlNode *nd;
      g_return_if_fail (nodes[i] >= 0 && nodes[i] < nn && local[nodes[i]] < 0);
      local[nodes[i]] = i;
      nd = nl_network_node (net, nodes[i]);
      if (nd->has_position)
        {
          ox = any_pos ? MIN (ox, nd->x) : nd->x;
          oy = any_pos ? MIN (oy, nd->y) : nd->y;
          any_pos = TRUE;
        }
    }

  L.m = m;
  build_adjacency (&L, net, local);
  assign_layers (&L);
  L.c = g_new (double, m + 1);
  L.items = g_new (SortItem, m + 1);
  for (int l = 0; l < L.n_layers; l++)
    centre_layer (&L, l);
  for (int s = 0; s < N_SWEEPS; s++)
    {
      for (int l = 1; l < L.n_layers; l++)
        sort_layer (&L, l, L.pfirst, L.pred);
      if (s == N_SWEEPS - 1)
        break; /* end on predecessors */
      for (int l = L.n_layers - 2; l >= 0; l--)
        sort_layer (&L, l, L.sfirst, L.succ);
    }

  for (int v = 0; v < m; v++)
    cmin = v == 0 ? L.c[v] : MIN (cmin, L.c[v]);
  for (int v = 0; v < m; v++)
    {
      xy[2 * v] = ox + (L.c[v] - cmin) * X_SPACING;
      xy[2 * v + 1] = oy + L.layer[v] * Y_SPACING;
    }
  layout_clear (&L);
}

void
nl_network_doc_auto_layout (NlNetworkDoc *doc, const int *nodes, int n)
{
  g_autofree int *s = NULL;
  g_autofree double *xy = NULL;
  int m;

  g_return_if_fail (NL_IS_NETWORK_DOC (doc));
  g_return_if_fail (n == 0 || nodes != NULL);
  g_return_if_fail (_nl_doc_all_valid (doc, nodes, n));
  if (n > 0)
    s = _nl_doc_sort_unique (doc, nodes, n, &m);
  else
    {
      m = nl_network_n_nodes (doc->net);
      s = g_new (int, MAX (m, 1));
      for (int i = 0; i < m; i++)
        s[i] = i;
    }
  if (m == 0)
    return;
  xy = g_new (double, 2 * m);
  nl_network_layout_compute (doc->net, s, m, xy);
  nl_network_doc_begin_group (doc, _("Arrange layers"));
  _nl_doc_set_positions (doc, s, m, xy, FALSE);
  nl_network_doc_end_group (doc);
}
