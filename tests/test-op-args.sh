#!/bin/bash
# test-op-args.sh SOURCE_ROOT — the CUDA kernels read their op's typed
# arguments (ctx->args, resolved once when a program is built, declared in
# ops/nl-<op>.h), never a parameter by name or by index per call: no CUDA
# source may use nl_op_param_index, the raw values (ctx->p) or NL_P_*.
src=${1:?usage: test-op-args.sh SOURCE_ROOT}
shopt -s nullglob
sources=("$src"/ops/cuda/*.cu "$src"/ops/cuda/*.cuh)
echo "1..2"
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
