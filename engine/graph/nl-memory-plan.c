/* nl-memory-plan.c — the static memory plan (MXNet's note_memory).
 *
 * Simulate allocation once over the execution order, allocating nothing:
 * a value's block is taken at the step that first writes it and returned
 * to the free list after the step that last reads it (what backward reads is
 * only what the op declares it needs, so other activations go early).
 * Outputs of in-place capable ops take their input's block when that step
 * is the input's last reader; elementwise backwards write the input's
 * gradient over the output's gradient the same way. Values that must keep their contents across
 * steps (prediction, loss, labels, weight gradients) get blocks of their own. Requests take the best-fitting free block, or
 * grow the largest free one (cheaper than a new block), or open a new one.
 * Block sizes are the largest request they served; the arena is their sum.
 *
 * Sharing is safe with a parallel scheduler because the executor tags ops
 * by block, not by value: two ops touching one block keep their order. */
#include "engine/graph/nl-memory-plan.h"

#include <limits.h>
#include <string.h>

#define ALIGN_BYTES 64

static int64_t
value_bytes (const NlGraph *g, int v)
{
  int64_t b = nl_shape_numel (&nl_graph_value (g, v)->shape) * (int64_t) sizeof (float);
  return (b + ALIGN_BYTES - 1) / ALIGN_BYTES * ALIGN_BYTES;
}

void
nl_memory_plan_free (NlMemoryPlan *plan)
{
  if (!plan)
    return;
  g_free (plan->offset);
  g_free (plan->block);
  g_free (plan->first);
  g_free (plan->last);
  g_free (plan->block_offset);
  g_free (plan->block_size);
  g_free (plan);
}

typedef struct {
  GArray *size;      /* int64_t per block */
  GArray *free_ids;  /* int: blocks free now */
} BlockList;

static int
blocks_add (BlockList *blocks, int64_t need)
{
  g_array_append_val (blocks->size, need);
  return (int) blocks->size->len - 1;
}

static int
blocks_take (BlockList *blocks, int64_t need)
{
  int best = -1, largest = -1;
  int64_t best_size = G_MAXINT64, largest_size = -1;
  for (guint i = 0; i < blocks->free_ids->len; i++)
    {
      int b = g_array_index (blocks->free_ids, int, i);
      int64_t sz = g_array_index (blocks->size, int64_t, b);
      if (sz >= need && sz < best_size)
        best = b, best_size = sz;
      if (sz > largest_size)
        largest = b, largest_size = sz;
    }
  if (best < 0 && largest >= 0)
    {
      best = largest;
      g_array_index (blocks->size, int64_t, best) = need;
    }
  if (best >= 0)
    {
      for (guint i = 0; i < blocks->free_ids->len; i++)
        if (g_array_index (blocks->free_ids, int, i) == best)
          {
            g_array_remove_index_fast (blocks->free_ids, i);
            break;
          }
      return best;
    }
  return blocks_add (blocks, need);
}

/* Persistent values keep their contents across steps (the next forward
 * must not overwrite them), so they never share: a block of their own. */
static int
take_for (const NlGraph *g, BlockList *blocks, int v, int64_t need)
{
  return nl_graph_value_is_persistent (g, v) ? blocks_add (blocks, need) : blocks_take (blocks, need);
}

/* Each value's first writing and last reading step: values bound before
 * the step (data, labels, lengths, the head gradient) start at -1; persistent ones
 * never end. */
static void
plan_lifetimes (const NlGraph *g, NlMemoryPlan *plan)
{
  int nv = g->values->len, ns = g->steps->len;
  int reads[NL_GRAPH_MAX_ACCESS], writes[NL_GRAPH_MAX_ACCESS], nr, nw;

  for (int v = 0; v < nv; v++)
    {
      NlValueKind k = nl_graph_value (g, v)->kind;
      plan->first[v] = (k == NL_VALUE_INPUT || k == NL_VALUE_LABEL || k == NL_VALUE_HEAD_GRAD || k == NL_VALUE_LENGTHS)
                         ? -1 : INT_MAX;
      plan->last[v] = -1;
      plan->block[v] = -1;
      plan->naive_bytes += value_bytes (g, v);
    }
  for (int s = 0; s < ns; s++)
    {
      nl_graph_step_access (g, s, reads, &nr, writes, &nw);
      for (int i = 0; i < nw; i++)
        plan->first[writes[i]] = MIN (plan->first[writes[i]], s);
      for (int i = 0; i < nr; i++)
        plan->last[reads[i]] = MAX (plan->last[reads[i]], s);
    }
  for (int v = 0; v < nv; v++)
    {
      if (plan->first[v] == INT_MAX) /* never written: treat as bound input */
        plan->first[v] = -1;
      plan->last[v] = MAX (plan->last[v], plan->first[v]);
      if (nl_graph_value_is_persistent (g, v))
        plan->last[v] = INT_MAX;
    }
}

/* Blocks shared between values whose lifetimes do not overlap, and
 * outputs written over an input that dies at their step (in place). */
static void
plan_shared (const NlGraph *g, NlMemoryPlan *plan, BlockList *blocks)
{
  int nv = g->values->len, ns = g->steps->len;
  int reads[NL_GRAPH_MAX_ACCESS], writes[NL_GRAPH_MAX_ACCESS], nr, nw;
  g_autofree gboolean *moved = g_new0 (gboolean, nv);
  g_autoptr (GPtrArray) dying = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);

  /* values freed after each step (index ns+1 holds those ending at -1) */
  for (int s = 0; s <= ns + 1; s++)
    g_ptr_array_add (dying, g_array_new (FALSE, FALSE, sizeof (int)));
  for (int v = 0; v < nv; v++)
    if (plan->last[v] != INT_MAX)
      g_array_append_val (g_ptr_array_index (dying, plan->last[v] < 0 ? ns + 1 : plan->last[v]), v);

  for (int v = 0; v < nv; v++)
    if (plan->first[v] < 0)
      plan->block[v] = take_for (g, blocks, v, value_bytes (g, v));

  for (int s = 0; s < ns; s++)
    {
      const NlStep *st = &g_array_index (g->steps, NlStep, s);
      GArray *ends = g_ptr_array_index (dying, s);
      nl_graph_step_access (g, s, reads, &nr, writes, &nw);
      for (int i = 0; i < nw; i++)
        {
          int w = writes[i];
          if (plan->first[w] != s || plan->block[w] >= 0)
            continue;
          if (i == 0 && st->kind != NL_STEP_GRAD_SUM)
            {
              const NlGraphNode *n = nl_graph_node (g, st->node);
              gboolean fwd = st->kind == NL_STEP_FORWARD;
              /* forward: output over data input 0; backward: gradient
               * of input 0 over the output's gradient */
              int src = fwd ? (n->n_data > 0 ? n->in[0] : -1) : n->out_grad;
              gboolean allowed = fwd ? n->def->inplace : n->def->backward_inplace && n->in_grad[0] == w;
              gboolean read_twice = FALSE;
              for (int p = 1; fwd && p < n->n_data; p++)
                read_twice = read_twice || n->in[p] == src;
              if (allowed && src >= 0 && plan->last[src] == s && !moved[src] && !read_twice
                  && !nl_graph_value_is_persistent (g, w) && !nl_graph_value_is_persistent (g, src)
                  && value_bytes (g, src) == value_bytes (g, w))
                {
                  plan->block[w] = plan->block[src];
                  moved[src] = TRUE;
                  plan->n_inplace++;
                  continue;
                }
            }
          plan->block[w] = take_for (g, blocks, w, value_bytes (g, w));
        }
      for (guint i = 0; i < ends->len; i++)
        {
          int v = g_array_index (ends, int, i);
          if (!moved[v] && plan->block[v] >= 0)
            g_array_append_val (blocks->free_ids, plan->block[v]);
        }
    }
  /* anything never reached (unused values) still gets memory */
  for (int v = 0; v < nv; v++)
    if (plan->block[v] < 0)
      plan->block[v] = take_for (g, blocks, v, value_bytes (g, v));
}

NlMemoryPlan *
nl_memory_plan_new (const NlGraph *g, gboolean naive)
{
  NlMemoryPlan *plan = g_new0 (NlMemoryPlan, 1);
  int nv = g->values->len;
  BlockList blocks = { g_array_new (FALSE, FALSE, sizeof (int64_t)), g_array_new (FALSE, FALSE, sizeof (int)) };

  plan->n_values = nv;
  plan->offset = g_new0 (int64_t, nv);
  plan->block = g_new0 (int, nv);
  plan->first = g_new0 (int, nv);
  plan->last = g_new0 (int, nv);

  plan_lifetimes (g, plan);

  if (naive)
    {
      for (int v = 0; v < nv; v++)
        {
          int64_t sz = value_bytes (g, v);
          g_array_append_val (blocks.size, sz);
          plan->block[v] = v;
        }
    }
  else
    plan_shared (g, plan, &blocks);

  plan->n_blocks = blocks.size->len;
  plan->block_size = (int64_t *) g_array_free (blocks.size, FALSE);
  plan->block_offset = g_new0 (int64_t, MAX (plan->n_blocks, 1));
  for (int b = 0; b < plan->n_blocks; b++)
    {
      plan->block_offset[b] = plan->planned_bytes;
      plan->planned_bytes += plan->block_size[b];
    }
  for (int v = 0; v < nv; v++)
    plan->offset[v] = plan->block_offset[plan->block[v]];
  g_array_unref (blocks.free_ids);
  return plan;
}
