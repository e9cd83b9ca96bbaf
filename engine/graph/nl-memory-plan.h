/* nl-memory-plan.h — the static memory plan of a compiled graph (MXNet's
 * "static memory planner"): where every value lives in one arena. */
#pragma once

#include <glib.h>

#include "engine/graph/nl-graph.h"

G_BEGIN_DECLS

typedef struct {
  int n_values;
  int64_t *offset;        /* per value: bytes into the arena */
  int *block;             /* per value: the block it lives in */
  int *first, *last;      /* per value: steps of its first write and last read (lifetime) */
  int n_blocks;
  int64_t *block_offset, *block_size;
  int64_t planned_bytes;  /* the arena */
  int64_t naive_bytes;    /* every value in its own buffer */
  int n_inplace;          /* outputs written over their input */
} NlMemoryPlan;

/* Simulates allocation over the step order: reference counts from the
 * steps' reads, in-place reuse where the op allows it and the input has no
 * later reader, blocks returned to a pool at their last read and reused
 * best-fit. Nothing is allocated. naive: one block per value. */
NlMemoryPlan *nl_memory_plan_new (const NlGraph *g, gboolean naive);
void nl_memory_plan_free (NlMemoryPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlMemoryPlan, nl_memory_plan_free)

G_END_DECLS
