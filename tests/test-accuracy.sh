#!/usr/bin/env bash
# test-accuracy.sh — the long checks (minutes): 5 epochs on Fashion-MNIST.
#   mlp   SGD lr 0.1,  batch 128: test accuracy >= 0.85
#   lenet SGD lr 0.05, batch 128: test accuracy >= 0.88
# Registered with -Dlong_tests=true (meson test --suite long).
set -u
cli="$1"
src="${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}"
if [ ! -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "1..0 # SKIP dataset-fashion-mnist is not installed"
  exit 0
fi
n=0 failed=0
for spec in mlp:0.1:0.85 lenet:0.05:0.88; do
  IFS=: read -r net lr want <<<"$spec"
  out=$("$cli" train --network "$src/data/networks/$net.json" --dataset fashion-mnist --epochs 5 \
        --batch-size 128 --optimizer sgd --lr "$lr" --json 2>&1)
  acc=$(tail -n 1 <<<"$out" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["test_acc"])' 2>/dev/null)
  n=$((n + 1))
  echo "# $net: $(tr '\n' ' ' <<<"$out")"
  if [ -n "$acc" ] && python3 -c "import sys; sys.exit(0 if $acc >= $want else 1)"; then
    echo "ok $n - $net test accuracy $acc >= $want"
  else
    failed=$((failed + 1)); echo "not ok $n - $net test accuracy ${acc:-none} < $want"
  fi
done
echo "1..$n"
[ $failed -eq 0 ]
