/* nl-vocab-fit.c — a text run's vocabulary against its first Embedding. */
#include "engine/train/nl-vocab-fit.h"
#include "engine/train/nl-run-config.h"
#include "ops/nl-embedding.h"

#include <string.h>

/* The Embedding nearest the Input by edges (the one fed the ids), -1 for
 * none: breadth first from every Input. */
static int
first_embedding (const NlNetwork *net)
{
  int n = nl_network_n_nodes (net);
  g_autofree int *queue = g_new (int, n);
  g_autofree gboolean *seen = g_new0 (gboolean, n);
  int head = 0, tail = 0;
  for (int i = 0; i < n; i++)
    if (!strcmp (nl_network_node (net, i)->def->name, "Input"))
      {
        queue[tail++] = i;
        seen[i] = TRUE;
      }
  while (head < tail)
    {
      int at = queue[head++];
      if (!strcmp (nl_network_node (net, at)->def->name, "Embedding"))
        return at;
      for (guint e = 0; e < net->edges->len; e++)
        {
          const NlEdge *edge = &g_array_index (net->edges, NlEdge, e);
          if (edge->from == at && !seen[edge->to])
            {
              seen[edge->to] = TRUE;
              queue[tail++] = edge->to;
            }
        }
    }
  return -1;
}

gboolean
nl_vocab_fit_network (const NlNetwork *net, const NlVocab *vocab, GError **error)
{
  g_return_val_if_fail (net != NULL, FALSE);
  if (!vocab)
    return TRUE;
  int at = first_embedding (net);
  if (at < 0)
    return TRUE;
  NlNode *n = nl_network_node (net, at);
  gint64 dim = NL_P_INT (n->params, EMB_INPUT_DIM);
  int size = nl_vocab_size (vocab);
  if (size <= dim)
    return TRUE;
  g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
               "the vocabulary has %d tokens but Embedding '%s' takes input_dim %" G_GINT64_FORMAT
               ": set --vocab-size %" G_GINT64_FORMAT " or the Embedding's input_dim", size, n->id, dim, dim);
  return FALSE;
}
