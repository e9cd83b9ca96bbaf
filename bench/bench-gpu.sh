#!/bin/bash
# bench-gpu.sh — ResNet-20 training speed, netloom against PyTorch eager on
# the same GPU in the same run: batch 128 and 512, fp32 and bf16, the two
# programs alternating so drift hits both. Prints each JSON line and a table
# of medians and ratios (netloom / PyTorch, higher is better).
#   bench/bench-gpu.sh BUILD_DIR [DEVICE] [ROUNDS]
set -u
build=${1:?build dir}; dev=${2:-cuda:0}; rounds=${3:-3}
src=$(cd "$(dirname "$0")/.." && pwd)
bench=$build/bench/bench-resnet20
[ -x "$bench" ] || bench=$build/bin/bench-resnet20   # a tools/gpu-pack.sh bundle
out=$(mktemp)
for r in $(seq "$rounds"); do
  for b in 128 512; do
    for p in fp32 bf16; do
      NETLOOM_SOURCE_DIR=$src "$bench" --device "$dev" --batch $b --precision $p | tee -a "$out"
      python3 "$src/bench/torch_resnet20.py" --device "${dev%%:*}" --batch $b --precision $p | tee -a "$out"
    done
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print("\nbatch precision  netloom img/s  pytorch img/s  ratio")
for b in (128, 512):
    for p in ("fp32", "bf16"):
        n = [r["images_per_s"] for r in rows if r["impl"] == "netloom" and r["batch"] == b and r["precision"] == p]
        t = [r["images_per_s"] for r in rows if r["impl"] == "pytorch" and r["batch"] == b and r["precision"] == p]
        if n and t:
            mn, mt = statistics.median(n), statistics.median(t)
            print(f"{b:5d} {p:9s} {mn:14.0f} {mt:14.0f} {mn / mt:6.2f}")
PY
rm -f "$out"
