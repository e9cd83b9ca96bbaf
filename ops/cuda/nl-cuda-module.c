/* nl-cuda-module.c — the one symbol libnetloom-cuda.so exports (the rest
 * is built with hidden visibility): the table nl-cuda-loader.c calls the
 * runtime, the engine's device helpers and the op kernels through. */
#include <gmodule.h>

#include "core/cuda/nl-cuda-module.h"
#include "ops/nl-op-registry.h"

/* weak: a tree where an op's .cu is still being written links, and that
 * op's entry is NULL (test-cuda reports it); hidden: never bound to a
 * symbol of another library */
#define NL_OP(c) extern const NlOpKernels nl_op_cuda_##c __attribute__ ((weak, visibility ("hidden")));
#include "ops/nl-op-list.h"
#undef NL_OP

G_MODULE_EXPORT const NlCudaModule *nl_cuda_module_get (void);

/* by NlOpId */
static const void *const op_kernels[NL_OP_COUNT] = {
#define NL_OP(c) [NL_OP_ID_##c] = &nl_op_cuda_##c,
#include "ops/nl-op-list.h"
#undef NL_OP
};

static const char *const op_names[NL_OP_COUNT] = {
#define NL_OP(c) [NL_OP_ID_##c] = #c,
#include "ops/nl-op-list.h"
#undef NL_OP
};

const NlCudaModule *
nl_cuda_module_get (void)
{
#define FN(ret, name, params, args, fallback) .name = name,
#define VFN(name, params, args) .name = name,
  static const NlCudaModule module = {
    .size = sizeof (NlCudaModule),
    NL_CUDA_FUNCS (FN, VFN)
    .op_kernels = op_kernels,
    .op_names = op_names,
    .n_op_kernels = NL_OP_COUNT,
    .shutdown = nl_cuda_shutdown,
  };
#undef FN
#undef VFN
  return &module;
}
