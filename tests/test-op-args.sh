#!/bin/bash
# test-op-args.sh SOURCE_ROOT — the CUDA kernels read their op's typed
# arguments (ctx->args, resolved once when a program is built, declared in
# ops/nl-<op>.h), never a parameter by name or by index per call: no CUDA
# source may use nl_op_param_index, the raw values (ctx->p) or NL_P_*.
# And definitions stay apart from kernels: ops/cpu/ defines no NlOpDef or
# parameter spec, ops/defs/ no kernels and nothing of a device.
src=${1:?usage: test-op-args.sh SOURCE_ROOT}
shopt -s nullglob
sources=("$src"/ops/cuda/*.cu "$src"/ops/cuda/*.cuh)
echo "1..4"
if [ ${#sources[@]} -ge 10 ]; then
  echo "ok 1 - ${#sources[@]} CUDA sources under $src/ops/cuda"
else
  echo "not ok 1 - only ${#sources[@]} CUDA sources under $src/ops/cuda"
fi
hits=$([ ${#sources[@]} -gt 0 ] && grep -nE 'param_index|NL_P_[A-Z]+ *\(|->p\[|\bc->p\b' "${sources[@]}")
if [ -z "$hits" ]; then
  echo "ok 2 - no parameter looked up in a CUDA kernel"
else
  echo "not ok 2 - CUDA kernels look parameters up instead of reading ctx->args:"
  printf '%s\n' "$hits" | sed 's/^/# /'
fi

cpu=("$src"/ops/cpu/*.c)
defs=("$src"/ops/defs/*.c)
hits=$([ ${#cpu[@]} -gt 0 ] && grep -nE '\b(NlOpDef|NlParamSpec|NlInferCtx)\b' "${cpu[@]}")
if [ ${#cpu[@]} -ge 10 ] && [ -z "$hits" ]; then
  echo "ok 3 - ${#cpu[@]} CPU sources, no op definition among them"
else
  echo "not ok 3 - op definitions in ops/cpu (they belong in ops/defs):"
  printf '%s\n' "$hits" | sed 's/^/# /'
fi
hits=$([ ${#defs[@]} -gt 0 ] && grep -nE '\b(NlOpKernels|NlOpCtx)\b|#include "ops/(cpu|cuda)/' "${defs[@]}")
if [ ${#defs[@]} -ge 10 ] && [ -z "$hits" ]; then
  echo "ok 4 - ${#defs[@]} op definitions, no kernels among them"
else
  echo "not ok 4 - kernels or device headers in ops/defs (they belong in ops/cpu, ops/cuda):"
  printf '%s\n' "$hits" | sed 's/^/# /'
fi
