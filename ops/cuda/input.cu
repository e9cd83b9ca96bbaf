/* input.cu — Input on CUDA: the batch is already on the device (bound to
 * in[0] by the graph); forward copies it to the output unless the planner
 * gave the output the input's memory, as ops/cpu/input.c does. Input takes
 * no gradient, so it has no backward. */
#include <cuda_runtime.h>

#include "core/cuda/nl-cuda.h"
#include "ops/cuda/nl-cuda-kernel.cuh"
#include "ops/nl-op.h"

namespace {

gboolean
forward (NlOpCtx *c, GError **error)
{
  cudaStream_t stream;
  float *y = nl_tensor_f32 (c->out[0]);
  const float *x = nl_tensor_f32 (c->in[0]);
  int64_t n = nl_tensor_numel (c->in[0]);

  if (y == x || n == 0)
    return TRUE;
  if (!enter (c, &stream, error))
    return FALSE;
  return nl_cuda_check (cudaMemcpyAsync (y, x, (size_t) n * sizeof (float), cudaMemcpyDeviceToDevice, stream),
                        "Input copy", error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_input = { forward, NULL, NULL };
