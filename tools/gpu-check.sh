#!/bin/bash
# gpu-check.sh — every check issue 7 asks for on a GPU, in one call on the
# device machine (see tools/gpu-pack.sh). Results go to $OUT (or ./gpu-out):
#   nvidia-smi, netloom-cli devices, test-cuda (every op forward/backward on
#   every registered backend against the CPU; --matrix: which ops each
#   backend runs), the math helpers, the device allocator, compute-sanitizer memcheck
#   of a training run, LeNet and ResNet-small accuracy on cuda:0 against the
#   CPU (same seed, epochs, settings), and the ResNet-20 benchmark against
#   PyTorch (bench/bench-gpu.sh). Each part prints a line "== part: rc".
#   resume: test-resume-kill.sh on cuda:0 in fp16 (kill -9 ten times,
#   resume inside epochs, compare with a run never interrupted)
#   tools/gpu-check.sh [tests|memcheck|accuracy|mpi|bench|resume|all]   (default all;
#   one call has 10 minutes, so the parts can go in separate calls)
set -u
what=${1:-all}
want () { [ "$what" = all ] || [ "$what" = "$1" ]; }
src=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$src/gpu-out}
mkdir -p "$out"
work=$(mktemp -d)
tar -C "$work" -xJf "$src/.carry/gpu.tar.xz"
g=$work/gpu
export LD_LIBRARY_PATH=$g/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NETLOOM_SOURCE_DIR=$src PATH=/usr/local/cuda/bin:$PATH
# the programs load the CUDA backend from here, not from the build tree's path
export NETLOOM_CUDA_MODULE=$g/lib/libnetloom-cuda.so
cli=$g/bin/netloom-cli
part () { local name=$1; shift; echo "== $name"; "$@" > "$out/$name.log" 2>&1; local rc=$?; tail -n 25 "$out/$name.log"; echo "== $name: rc $rc"; }
ds=fashion-mnist:$g/data
if want tests; then
part nvidia-smi nvidia-smi
part devices "$cli" devices
part devices-json "$cli" devices --json
part test-cuda "$g/bin/test-cuda" --tap
part test-cuda-matrix "$g/bin/test-cuda" --matrix
[ -x "$g/bin/test-cuda-runtime" ] && part test-cuda-runtime "$g/bin/test-cuda-runtime" --tap
[ -x "$g/bin/test-mixed-train" ] && part test-mixed-train "$g/bin/test-mixed-train" --tap
fi
# lenet in fp32 (dense, conv, pool), resnet-small in bf16 (batch norm,
# residual adds, the half-precision casts); the leak check needs the
# CLI's nl_backend_shutdown_all () at exit; a block netloom still holds
# then is a warning, fatal here
want memcheck && for run in lenet:fp32 resnet-small:bf16; do
  IFS=: read -r n prec <<<"$run"
  G_DEBUG=fatal-warnings part "memcheck-$n-$prec" compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    "$cli" train --network "$src/data/networks/$n.json" --dataset "$ds" --epochs 1 --batch-size 512 \
    --device cuda:0 --precision "$prec" --workers 0
done
want accuracy && for net in lenet:0.05 resnet-small:0.05; do
  IFS=: read -r n lr <<<"$net"
  for dev in cuda:0 cpu; do
    for prec in fp32 bf16; do
      [ "$dev" = cpu ] && [ "$prec" = bf16 ] && continue
      part "acc-$n-${dev%%:*}-$prec" "$cli" train --network "$src/data/networks/$n.json" --dataset "$ds" --epochs 3 \
        --batch-size 128 --lr "$lr" --seed 1 --device "$dev" --precision "$prec" --json
    done
  done
done
# data parallelism: 2 ranks on the one GPU (NCCL refuses two ranks on one
# device, so the gradients go through host memory and MPI) against one
# process, same seed and global batch
if want mpi && [ -d "$g/ompi" ]; then
  mpi=(bash "$src/tools/mpi-staged.sh" "$g/ompi" orterun -np 2)
  lenet=(train --network "$src/data/networks/lenet.json" --dataset "$ds" --epochs 2 --batch-size 128 --lr 0.05
         --seed 1 --device cuda --json)
  part mpi-np1-cuda "$cli" "${lenet[@]}"
  part mpi-np2-cuda "${mpi[@]}" "$cli" "${lenet[@]}"
  part mpi-np2-cuda-bf16 "${mpi[@]}" "$cli" "${lenet[@]}" --precision bf16
fi
want resume && NETLOOM_RESUME_KILL_ARGS="--device cuda:0 --precision fp16" \
  part resume-kill-cuda-fp16 bash "$src/tests/test-resume-kill.sh" "$cli"
want bench && part bench bash "$src/bench/bench-gpu.sh" "$g" cuda:0 3
rm -rf "$work"
