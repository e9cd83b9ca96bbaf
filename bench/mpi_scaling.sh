#!/usr/bin/env bash
# mpi_scaling.sh — data-parallel speed on one machine: `mpirun -np 2` with
# 1 thread per rank against 1 process with 2 threads, mlp and lenet on
# Fashion-MNIST, the two alternated in every round so drift hits both.
# Prints every epoch's JSON line, then per network the medians (epochs 2..
# of every round) of images/s, the ratio np 2 / 1 process, and the share of
# the step time the ranks spent all-reducing in all and waiting on it
# after their own backward was done (allreduce_s, allreduce_exposed_s).
#   bench/mpi_scaling.sh [BUILD_DIR] [ROUNDS] [EPOCHS]
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}; rounds=${2:-3}; epochs=${3:-3}
cli=$build/app/netloom-cli
mpi=(mpirun --oversubscribe -np 2)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
out=$(mktemp)
for r in $(seq "$rounds"); do
  for net in mlp lenet; do
    args=(train --network "$src/data/networks/$net.json" --dataset fashion-mnist --epochs "$epochs" --batch-size 128
          --lr 0.05 --seed 1 --json)
    "$cli" "${args[@]}" --threads 2 | sed "s/^{/{\"config\":\"1 process x 2 threads\",/" | tee -a "$out"
    "${mpi[@]}" "$cli" "${args[@]}" --threads 1 | sed "s/^{/{\"config\":\"2 processes x 1 thread\",/" | tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print("\nnetwork  1 process x 2 threads  2 processes x 1 thread  ratio  all-reduce share  exposed share")
for net in ("mlp", "lenet"):
    one = [r for r in rows if r["network"] == net and r["config"].startswith("1") and r["epoch"] > 1]
    two = [r for r in rows if r["network"] == net and r["config"].startswith("2") and r["epoch"] > 1]
    if not one or not two:
        continue
    a = statistics.median(r["images_per_s"] for r in one)
    b = statistics.median(r["images_per_s"] for r in two)
    busy = statistics.median(r["allreduce_s"] / r["seconds"] for r in two)
    exposed = statistics.median(r["allreduce_exposed_s"] / r["seconds"] for r in two)
    print(f"{net:7s} {a:22.0f} {b:23.0f} {b / a:6.2f} {busy:16.1%} {exposed:14.1%}")
PY
rm -f "$out"
