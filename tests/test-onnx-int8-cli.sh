#!/usr/bin/env bash
# test-onnx-int8-cli.sh — export --onnx --int8: an MLP, LeNet and
# resnet-small after one epoch on 2048 Fashion-MNIST images, quantized
# (netloom-cli quantize, entropy calibration), exported in QDQ form; the
# graph holds QuantizeLinear/DequantizeLinear and int8 weights with
# per-channel scales where netloom's INT8 executor runs in 8 bits (all but
# LeNet's first convolution), BatchNorms folded into them,
# onnx.checker accepts it, and onnxruntime-node classifies the 1000 test
# images within 0.5 points of netloom's own INT8 accuracy. The fp32 export
# of the run stays what it was; a run without an INT8 model and --int8
# without --onnx are clear errors.
# Usage: test-onnx-int8-cli.sh PATH/TO/netloom-cli (TAP)
set -u
cli="$1"
src=$(realpath "${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}")
tmp=$(mktemp -d)
. "$(dirname "$0")/cli-lib.sh"
trap 'rm -rf "$tmp"' EXIT
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
N_TEST=1000

# onnxruntime-node as test-onnx-cli.sh finds it
ort="${NETLOOM_ORT_MODULE:-}"
if [ -z "$ort" ] && [ -d "$src/.npm-ort/node_modules/onnxruntime-node" ]; then
  ort="$src/.npm-ort/node_modules/onnxruntime-node"
fi
if [ -z "$ort" ] && command -v node >/dev/null; then
  ort=$(node -e 'const p = require.resolve("onnxruntime-node"); console.log(p.slice(0, p.lastIndexOf("onnxruntime-node") + 16))' 2>/dev/null || true)
fi
have_onnx=0
python3 -c 'import onnx, numpy' 2>/dev/null && have_onnx=1

fm=/usr/share/datasets/fashion-mnist
if [ -f "$fm/train-images-idx3-ubyte.gz" ]; then
  python3 - "$fm" "$tmp/data" $N_TEST <<'PY'
import gzip, os, struct, sys
src, dst, n_test = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(dst)
for name, n, header in (("train-images-idx3-ubyte", 2048, 16), ("train-labels-idx1-ubyte", 2048, 8),
                        ("t10k-images-idx3-ubyte", n_test, 16), ("t10k-labels-idx1-ubyte", n_test, 8)):
    d = gzip.open(os.path.join(src, name + ".gz")).read()
    size = 784 if header == 16 else 1
    open(os.path.join(dst, name), "wb").write(d[:4] + struct.pack(">I", n) + d[8:header] + d[header:header + n * size])
PY
  D="fashion-mnist:$tmp/data"
else
  echo "# $fm is absent (Debian dataset-fashion-mnist): synthetic images instead"
  make_mnist "$tmp/data" 2048 $N_TEST
  D="mnist:$tmp/data"
fi
P="$tmp/p.netloom"
out=$("$cli" project new --sample "$P" 2>&1) || not_ok "project new" "$out"
for net in mlp lenet resnet-small; do
  "$cli" train --project "$P" --network "$net" --dataset "$D" --epochs 1 --threads 2 --json >/dev/null 2>"$tmp/train.err" \
    || not_ok "train $net" "$(cat "$tmp/train.err")"
done

# before quantize: no INT8 model is one message, and nothing is written
out=$("$cli" export --project "$P" --run 1 --onnx "$tmp/none.onnx" --int8 2>&1); s=$?
[ $s -eq 1 ] && grep -q "run 1 has no INT8 model" <<<"$out" && grep -q "quantize" <<<"$out" && [ ! -e "$tmp/none.onnx" ] \
  && ok "export --int8 of a run without an INT8 model says to quantize first" || not_ok "no INT8 model" "$out"
out=$("$cli" export --project "$P" --run 1 --safetensors "$tmp/w.st" --int8 2>&1); s=$?
[ $s -eq 2 ] && grep -q -- "--onnx" <<<"$out" && [ ! -e "$tmp/w.st" ] && ok "--int8 without --onnx is a usage error" \
  || not_ok "--int8 --safetensors" "$out"

for r in 1 2 3; do
  "$cli" export --project "$P" --run $r --onnx "$tmp/fp32-before-$r.onnx" >/dev/null 2>&1 || not_ok "fp32 export run $r"
  if "$cli" quantize --project "$P" --run $r --json >"$tmp/q$r.json" 2>"$tmp/q$r.err" \
     && out=$("$cli" export --project "$P" --run $r --onnx "$tmp/int8-$r.onnx" --int8 2>&1); then
    ok "quantize and export --onnx --int8 run $r ($out)"
  else
    not_ok "quantize / export --int8 run $r" "$(cat "$tmp/q$r.err") $out"
  fi
  "$cli" export --project "$P" --run $r --onnx "$tmp/fp32-after-$r.onnx" >/dev/null 2>&1
  cmp -s "$tmp/fp32-before-$r.onnx" "$tmp/fp32-after-$r.onnx" && ! cmp -s "$tmp/fp32-after-$r.onnx" "$tmp/int8-$r.onnx" \
    && ok "the fp32 export of run $r is unchanged by its INT8 model" || not_ok "fp32 export of run $r changed"
done

# the graph: QDQ pairs, int8 weights per channel, BatchNorm folded, metadata
if [ $have_onnx -eq 1 ]; then
  out=$(python3 - "$tmp" <<'PY' 2>&1
import json, sys
import numpy as np
import onnx
from onnx import TensorProto, checker, numpy_helper
tmp = sys.argv[1]
for r in (1, 2, 3):
    q = [json.loads(l) for l in open("%s/q%d.json" % (tmp, r)) if l.startswith("{")][-1]
    m = onnx.load("%s/int8-%d.onnx" % (tmp, r))
    checker.check_model(m, full_check=True)
    g = m.graph
    ops = [n.op_type for n in g.node]
    inits = {t.name: t for t in g.initializer}
    meta = {p.key: p.value for p in m.metadata_props}
    assert meta["netloom_int8_model"] == str(q["int8_model"]) and meta["netloom_run"] == str(r), meta
    assert meta["netloom_checkpoint"] == str(q["checkpoint"]), (meta, q)
    n_q = ops.count("QuantizeLinear")
    # the executor runs a convolution of one input channel that a pool reads (LeNet's first)
    # in fp32, and every other one and every Dense in INT8; the prediction stays float
    gemms = [n for n in g.node if n.op_type in ("Conv", "Gemm")]
    fp32 = [n for n in gemms if n.input[1] in inits and inits[n.input[1]].data_type == TensorProto.FLOAT]
    assert [n.name for n in fp32] == ([gemms[0].name] if r == 2 else []), [n.name for n in fp32]
    assert fp32 or (g.node[0].op_type == "QuantizeLinear" and g.node[0].input[0] == "data"), g.node[0]
    assert "BatchNormalization" not in ops, ops
    assert g.node[-1].op_type != "DequantizeLinear", g.node[-1]
    assert n_q >= len(q["points"]) - 2, (n_q, q["points"])
    gemms = [n for n in gemms if n not in fp32]
    assert gemms and all(n.input[1].endswith("/dequantized") for n in gemms), [n.input for n in gemms]
    for n in gemms:
        dq = [d for d in g.node if d.output[0] == n.input[1]][0]
        w, scale = inits[dq.input[0]], numpy_helper.to_array(inits[dq.input[1]])
        assert dq.op_type == "DequantizeLinear" and w.data_type == TensorProto.INT8, (dq, w.data_type)
        assert scale.shape == (w.dims[0],) and (scale > 0).all(), scale.shape
        assert np.abs(numpy_helper.to_array(w)).max() == 127
    print("run %d: %d nodes, %d QuantizeLinear, %d int8 weights" % (r, len(ops), n_q, len(gemms)))
PY
)
  [ $? -eq 0 ] && ok "the INT8 exports hold QDQ pairs, int8 per-channel weights, folded BatchNorms ($(tr '\n' ';' <<<"$out"))" \
    || not_ok "INT8 graph" "$out"
else
  skip "no Python with the onnx package (Debian python3-onnx)"
fi

# onnxruntime: the accuracy netloom's INT8 model has, within 0.5 points
if [ -n "$ort" ] && [ $have_onnx -eq 1 ] && command -v node >/dev/null; then
  for r in 1 2 3; do
    meta=$(python3 -c 'import onnx, sys; m = {p.key: p.value for p in onnx.load(sys.argv[1]).metadata_props}; print(m["input_mean"], m["input_std"])' "$tmp/int8-$r.onnx")
    acc=$("$cli" evaluate --project "$P" --run $r --int8 --json 2>"$tmp/ev.err" \
          | python3 -c 'import json, sys; print(json.load(sys.stdin)["accuracy"])')
    if out=$(node "$src/tests/onnx_run.js" "$ort" "$tmp/int8-$r.onnx" "$tmp/data/t10k-images-idx3-ubyte" $N_TEST $meta \
             2>&1 >"$tmp/ort$r.txt"); then
      out=$(python3 - "$tmp/ort$r.txt" "$tmp/data/t10k-labels-idx1-ubyte" "$tmp/q$r.json" "$acc" <<'PY' 2>&1
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
labels = open(sys.argv[2], "rb").read()[8:]
q = [json.loads(l) for l in open(sys.argv[3]) if l.startswith("{")][-1]
assert len(rows) == len(labels), (len(rows), len(labels))
ort = sum(max(range(len(p)), key=p.__getitem__) == l for p, l in zip(rows, labels)) / len(rows)
nl = float(sys.argv[4])  # evaluate --int8: what quantize measured too
print("onnxruntime %.2f%%, netloom evaluate --int8 %.2f%% (fp32 %.2f%%)" % (100 * ort, 100 * nl, 100 * q["fp32_test_acc"]))
assert abs(ort - nl) <= 0.005, (ort, nl)
assert abs(q["int8_test_acc"] - nl) < 1e-9, (q, nl)
PY
)
      [ $? -eq 0 ] && ok "onnxruntime runs the INT8 export of run $r on $N_TEST test images: $out" \
        || not_ok "onnxruntime accuracy of run $r's INT8 export" "$out"
    else
      not_ok "onnxruntime failed on int8-$r.onnx" "$out $(cat "$tmp/ev.err")"
    fi
  done
  # opset 13 (the first with per-axis DequantizeLinear) ending in probabilities: the same classes
  if out=$("$cli" export --project "$P" --run 3 --onnx "$tmp/int8-3-13.onnx" --int8 --opset 13 --softmax 2>&1) \
     && out=$(node "$src/tests/onnx_run.js" "$ort" "$tmp/int8-3-13.onnx" "$tmp/data/t10k-images-idx3-ubyte" $N_TEST $meta \
              2>&1 >"$tmp/ort3-13.txt") \
     && out=$(python3 - "$tmp/int8-3-13.onnx" "$tmp/ort3-13.txt" "$tmp/ort3.txt" <<'PY' 2>&1
import json, sys
import onnx
from onnx import checker
m = onnx.load(sys.argv[1])
checker.check_model(m, full_check=True)
assert m.opset_import[0].version == 13 and m.graph.output[0].name == "probabilities", m.graph.output
assert m.graph.node[-1].op_type == "Softmax", m.graph.node[-1]
a, b = ([json.loads(l) for l in open(p)] for p in sys.argv[2:4])
arg = lambda p: max(range(len(p)), key=p.__getitem__)
same = sum(arg(x) == arg(y) for x, y in zip(a, b))
print("%d of %d classes as at opset 17" % (same, len(a)))
assert same == len(a) and len(a) == len(b)
PY
); then
    ok "export --int8 --opset 13 --softmax: probabilities, the same classes ($out)"
  else
    not_ok "export --int8 --opset 13 --softmax" "$out"
  fi
else
  skip "onnxruntime-node not found (npm install --ignore-scripts onnxruntime-node into .npm-ort, or set NETLOOM_ORT_MODULE)"
fi

echo "1..$n"
[ $failed -eq 0 ]
