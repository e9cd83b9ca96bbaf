/* nl-cpu-ops.c — the CPU's op table: every op's kernels of ops/cpu/<op>.c
 * by registry id, handed to the CPU backend as the CUDA module
 * (ops/cuda/nl-cuda-module.c) hands its own to the loader. */
#include "ops/nl-op-registry.h"

/* weak: a tree where an op's kernels are still being written links, and
 * that op's entry is NULL (test-registry reports it) */
#define NL_OP(c) extern const NlOpKernels nl_op_cpu_##c __attribute__ ((weak));
#include "ops/nl-op-list.h"
#undef NL_OP

/* by NlOpId */
static const void *const op_kernels[NL_OP_COUNT] = {
#define NL_OP(c) [NL_OP_ID_##c] = &nl_op_cpu_##c,
#include "ops/nl-op-list.h"
#undef NL_OP
};

static const char *const op_names[NL_OP_COUNT] = {
#define NL_OP(c) [NL_OP_ID_##c] = #c,
#include "ops/nl-op-list.h"
#undef NL_OP
};

/* A constructor: every binary that links ops/ (link_whole) has the table
 * before its first op runs, with no start-up call to forget. */
__attribute__ ((constructor)) static void
nl_cpu_ops_register (void)
{
  nl_backend_cpu_set_op_kernels (op_kernels, op_names, NL_OP_COUNT);
}
