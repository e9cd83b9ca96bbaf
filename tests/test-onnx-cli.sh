#!/usr/bin/env bash
# test-onnx-cli.sh — models out of netloom and classifications from the
# command line: export --onnx of mlp, lenet and resnet-small after one epoch
# on (a subset of) Fashion-MNIST, each accepted by onnx.checker (Debian
# python3-onnx) and run by onnxruntime (npm onnxruntime-node) to netloom's
# probabilities within 1e-4 on 256 test images; evaluate (the run's stored
# accuracy, per-class scores, confusion matrix) and predict (dataset samples
# and a PNG file, --json); import-onnx of those exports and of a LeNet, a
# ResNet and two MLPs exported by PyTorch, to the same probabilities; and
# fine-tuning an imported model whose normalisation is Mul and Sub.
# Usage: test-onnx-cli.sh PATH/TO/netloom-cli (TAP)
set -u
cli="$1"
src=$(realpath "${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}")
tmp=$(mktemp -d)
. "$(dirname "$0")/cli-lib.sh"
trap 'rm -rf "$tmp"' EXIT
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }

# a Python with the onnx package (Debian's python3-onnx is /usr/bin/python3's)
py=""
for c in python3 /usr/bin/python3; do
  if command -v "$c" >/dev/null && "$c" -c 'import onnx' 2>/dev/null; then py="$c"; break; fi
done
# onnxruntime-node: $NETLOOM_ORT_MODULE, the source tree's .npm-ort (what
# tools/netloom-setup installs), or anywhere node finds it
ort="${NETLOOM_ORT_MODULE:-}"
if [ -z "$ort" ] && [ -d "$src/.npm-ort/node_modules/onnxruntime-node" ]; then
  ort="$src/.npm-ort/node_modules/onnxruntime-node"
fi
if [ -z "$ort" ] && command -v node >/dev/null; then
  ort=$(node -e 'const p = require.resolve("onnxruntime-node"); console.log(p.slice(0, p.lastIndexOf("onnxruntime-node") + 16))' 2>/dev/null || true)
fi

# Fashion-MNIST's first 2048 training and 256 test images (synthetic bands without the package)
fm=/usr/share/datasets/fashion-mnist
if [ -f "$fm/train-images-idx3-ubyte.gz" ]; then
  python3 - "$fm" "$tmp/data" <<'PY'
import gzip, os, struct, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst)
for name, n, header in (("train-images-idx3-ubyte", 2048, 16), ("train-labels-idx1-ubyte", 2048, 8),
                        ("t10k-images-idx3-ubyte", 256, 16), ("t10k-labels-idx1-ubyte", 256, 8)):
    d = gzip.open(os.path.join(src, name + ".gz")).read()
    size = 784 if header == 16 else 1
    open(os.path.join(dst, name), "wb").write(d[:4] + struct.pack(">I", n) + d[8:header] + d[header:header + n * size])
PY
  D="fashion-mnist:$tmp/data"
else
  echo "# $fm is absent (Debian dataset-fashion-mnist): synthetic images instead"
  make_mnist "$tmp/data" 2048 256
  D="mnist:$tmp/data"
fi
P="$tmp/p.netloom"

out=$("$cli" project new --sample "$P" 2>&1) || not_ok "project new" "$out"
# run 4: every op that exports, in one network (tests/fixtures/onnx-every-op.json)
for net in mlp lenet resnet-small "$src/tests/fixtures/onnx-every-op.json"; do
  "$cli" train --project "$P" --network "$net" --dataset "$D" --epochs 1 --threads 2 --json >/dev/null 2>"$tmp/train.err" \
    || not_ok "train $net" "$(cat "$tmp/train.err")"
done

# run 1 mlp, 2 lenet (logits, opset 13), 3 resnet-small
ok_export=1
for r in 1 2 3; do
  args=(--softmax)
  [ $r -eq 2 ] && args=(--opset 13)
  out=$("$cli" export --project "$P" --run $r --onnx "$tmp/r$r.onnx" "${args[@]}" 2>&1) || { ok_export=0; not_ok "export --onnx run $r" "$out"; }
done
for o in 13 17; do
  out=$("$cli" export --project "$P" --run 4 --onnx "$tmp/every$o.onnx" --opset $o 2>&1) || { ok_export=0; not_ok "export --onnx every op, opset $o" "$out"; }
done
[ $ok_export -eq 1 ] && ok "export --onnx writes mlp, lenet, resnet-small and a network of every exportable op"

if [ -n "$py" ]; then
  out=$("$py" - "$tmp" <<'PY' 2>&1
import json, sys, onnx
from onnx import checker
tmp = sys.argv[1]
for r, opset, last in ((1, 17, "Softmax"), (2, 13, "Gemm"), (3, 17, "Softmax")):
    m = onnx.load("%s/r%d.onnx" % (tmp, r))
    checker.check_model(m, full_check=True)
    ops = [n.op_type for n in m.graph.node]
    assert m.opset_import[0].version == opset, m.opset_import
    assert ops[-1] == last, ops
    assert "Dropout" not in ops, ops
    g = m.graph
    assert [i.name for i in g.input] == ["data"], g.input
    dims = g.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "N" and [d.dim_value for d in dims[1:]] == [1, 28, 28], dims
    assert g.output[0].name == ("output" if r == 2 else "probabilities"), g.output
    meta = {p.key: p.value for p in m.metadata_props}
    assert meta["netloom_run"] == str(r) and meta["netloom_version"], meta
    assert abs(float(meta["input_mean"]) - 0.13) < 1e-6 and abs(float(meta["input_std"]) - 0.31) < 1e-6, meta
    assert len(json.loads(meta["class_names"])) == 10, meta
    if r == 3:
        assert ops.count("BatchNormalization") >= 5 and "Add" in ops, ops
        assert not any(n.attribute and n.op_type == "BatchNormalization" and
                       any(a.name == "training_mode" and a.i for a in n.attribute) for n in g.node)
    print("run", r, len(ops), "nodes")
for opset in (13, 17):
    m = onnx.load("%s/every%d.onnx" % (tmp, opset))
    checker.check_model(m, full_check=True)
    ops = [n.op_type for n in m.graph.node]
    assert ("LayerNormalization" in ops) == (opset == 17) and "Erf" in ops and "Dropout" not in ops, ops
    assert "Transpose" in ops and ops.count("Mul") > 2 and ops.count("Sub") >= 3, ops
    assert m.graph.output[0].name == "log_probabilities", m.graph.output
PY
)
  [ $? -eq 0 ] && ok "onnx.checker accepts every export; inputs, outputs, opset and metadata as documented" \
    || not_ok "onnx.checker" "$out"
else
  skip "no Python with the onnx package (Debian python3-onnx)"
fi

if [ -n "$ort" ] && [ -n "$py" ] && command -v node >/dev/null; then
  for model in r1 r2 r3 every13 every17; do
    r=${model#r}
    case $model in every*) r=4 ;; esac
    meta=$("$py" -c 'import onnx, sys; m = {p.key: p.value for p in onnx.load(sys.argv[1]).metadata_props}; print(m["input_mean"], m["input_std"])' "$tmp/$model.onnx")
    img=$(ls "$tmp/data"/t10k-images-idx3-ubyte)
    if out=$(node "$src/tests/onnx_run.js" "$ort" "$tmp/$model.onnx" "$img" 256 $meta 2>&1 >"$tmp/ort$r.txt") \
       && "$cli" predict --project "$P" --run $r --checkpoint last --dataset "$D" --limit 256 --json >"$tmp/nl$r.txt" 2>&1; then
      out=$(python3 - "$tmp/ort$r.txt" "$tmp/nl$r.txt" <<'PY' 2>&1
import json, sys
ort = [json.loads(l) for l in open(sys.argv[1])]
nl = [json.loads(l)["probabilities"] for l in open(sys.argv[2])]
assert len(ort) == len(nl) == 256, (len(ort), len(nl))
diff = max(abs(a - b) for x, y in zip(ort, nl) for a, b in zip(x, y))
print("max abs diff %.3g" % diff)
assert diff < 1e-4, diff
PY
)
      [ $? -eq 0 ] && ok "onnxruntime gives netloom's probabilities for $model.onnx (run $r) on 256 test images ($out)" \
        || not_ok "onnxruntime vs netloom, $model.onnx" "$out"
    else
      not_ok "onnxruntime or predict failed on $model.onnx" "$out $(head -c 300 "$tmp/nl$r.txt")"
    fi
  done
else
  skip "onnxruntime-node not found (npm install --ignore-scripts onnxruntime-node into .npm-ort, or set NETLOOM_ORT_MODULE)"
fi

# import: netloom's own exports come back with the same probabilities
compare() {
  python3 - "$1" "$2" <<'PY'
import json, sys
a = [json.loads(l)["probabilities"] for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
b = [r["probabilities"] if isinstance(r, dict) else r for r in b]
assert len(a) == len(b) == 256, (len(a), len(b))
diff = max(abs(x - y) for p, q in zip(a, b) for x, y in zip(p, q))
print("max abs diff %.3g" % diff)
assert diff < 1e-4, diff
PY
}
# (every op at opset 13 and 17: GELU and LayerNorm written as formulas at 13)
for model in r2 r3 every13 every17; do
  r=${model#r}
  case $model in every*) r=4 ;; esac
  # run r's own predictions (made above only where onnxruntime is)
  [ -s "$tmp/nl$r.txt" ] || "$cli" predict --project "$P" --run $r --checkpoint last --dataset "$D" --limit 256 --json \
    >"$tmp/nl$r.txt" 2>&1
  if out=$("$cli" import-onnx --project "$P" --name "back-$model" "$tmp/$model.onnx" 2>&1) \
     && "$cli" predict --project "$P" --network "back-$model" --dataset "$D" --limit 256 --json >"$tmp/back$model.txt" 2>&1 \
     && out=$(compare "$tmp/back$model.txt" "$tmp/nl$r.txt" 2>&1); then
    ok "import-onnx of run $r's export $model.onnx predicts as run $r ($out)"
  else
    not_ok "import-onnx round trip of $model.onnx (run $r)" "$out $(head -c 300 "$tmp/back$model.txt")"
  fi
done
# a model with nodes netloom cannot map (an Erf outside GELU's formula, a
# Transpose that moves the batch): each named, nothing added
if [ -n "$py" ]; then
  "$py" - "$tmp/unsupported.onnx" <<'PY'
import sys
from onnx import TensorProto, helper, save
nodes = [helper.make_node("Erf", ["x"], ["e"], name="erf"), helper.make_node("Transpose", ["x"], ["t"], name="swap", perm=[1, 0]),
         helper.make_node("Add", ["e", "t"], ["y"], name="sum")]
g = helper.make_graph(nodes, "unsupported", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
  n_before=$("$cli" runs --project "$P" --json | wc -l)
  out=$("$cli" import-onnx --project "$P" --name unsupported "$tmp/unsupported.onnx" 2>&1); s=$?
  [ $s -eq 1 ] && grep -q "2 nodes cannot be imported" <<<"$out" && grep -q "Erf “erf”" <<<"$out" \
    && grep -q "Transpose “swap”.*batch" <<<"$out" \
    && [ "$("$cli" runs --project "$P" --json | wc -l)" -eq "$n_before" ] \
    && ! "$cli" project info --json "$P" | grep -q '"unsupported"' \
    && ok "import-onnx lists every unsupported node in one message and adds nothing" || not_ok "import unsupported" "$out"
  # node names with '-' (an edge's arrow in netloom's ids; found by
  # fuzz-onnx: the node could not be added and the import crashed)
  "$py" - "$tmp/dash.onnx" <<'PY'
import sys
from onnx import TensorProto, helper, save
nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu-1"), helper.make_node("Sigmoid", ["r"], ["y"], name="-")]
g = helper.make_graph(nodes, "dash", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
  out=$("$cli" import-onnx --project "$P" --name dash "$tmp/dash.onnx" 2>&1) \
    && ok "node names with '-' import" || not_ok "import of node names with '-'" "$out"
else
  skip "no Python with the onnx package to write a model netloom cannot import"
fi
out=$("$cli" import-onnx --project "$P" --name back-r2 "$tmp/r2.onnx" 2>&1); s=$?
[ $s -eq 1 ] && grep -q "back-r2" <<<"$out" && ok "import-onnx refuses a network name the project has" || not_ok "import name taken" "$out"
head -c 1000 "$tmp/r3.onnx" >"$tmp/cut.onnx"
out=$("$cli" import-onnx --project "$P" "$tmp/cut.onnx" 2>&1); s=$?
[ $s -eq 1 ] && grep -q "cut.onnx" <<<"$out" && grep -q "malformed or truncated" <<<"$out" && ok "a truncated model is one clear error" || not_ok "truncated import" "$out"

# import: a LeNet, a small ResNet with BatchNorm and an MLP with LayerNorm
# and GELU (erf; tanh at opset 13, both as formulas) exported by PyTorch
tpy=""
for c in python3 /usr/bin/python3; do
  if command -v "$c" >/dev/null && "$c" -c 'import torch, onnx' 2>/dev/null; then tpy="$c"; break; fi
done
if [ -n "$tpy" ]; then
  mkdir -p "$tmp/torch"
  if out=$("$tpy" "$src/tests/torch_onnx_models.py" "$tmp/torch" "$tmp/data/t10k-images-idx3-ubyte" 256 2>&1); then
    for m in lenet resnet mlp-gelu mlp-gelu-tanh; do
      if out=$("$cli" import-onnx --project "$P" --name "torch-$m" "$tmp/torch/$m.onnx" 2>&1) \
         && "$cli" predict --project "$P" --network "torch-$m" --dataset "$D" --limit 256 --json >"$tmp/torch-$m.txt" \
              2>"$tmp/torch-$m.err" \
         && out=$(compare "$tmp/torch-$m.txt" "$tmp/torch/$m.json" 2>&1); then
        ok "PyTorch's $m imports and gives PyTorch's probabilities on 256 images ($out)"
      else
        # predict says on stderr which normalisation a model without one uses: not JSON
        not_ok "PyTorch $m import" "$out $(head -c 300 "$tmp/torch-$m.txt") $(cat "$tmp/torch-$m.err" 2>/dev/null)"
      fi
    done
  else
    not_ok "torch.onnx.export" "$out"
  fi
else
  skip "no Python with torch and onnx (Debian python3-torch, python3-onnx)"
fi

# fine-tuning an imported model (as MXNet's Gluon tutorial): a normalisation
# x * scale - mean (Mul, Sub of constants) before an MLP, made with
# onnx.helper; forked from its import run it trains on (the loss falls, the
# MLP's weights change, the normalisation's constants stay), and
# train --network trains it from fresh weights
if [ -n "$py" ]; then
  "$py" - "$tmp/norm-mlp.onnx" "$D" "$tmp/foreign-mlp.onnx" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save
rng = np.random.default_rng(3)
t = lambda a, name: numpy_helper.from_array(np.asarray(a, np.float32), name)
inits = [t(np.full((), 1 / 0.31), "scale"), t(np.full((1, 28, 28), 0.13 / 0.31), "mean"),
         t(rng.standard_normal((784, 32)) * 0.05, "w1"), t(np.zeros(32), "b1"),
         t(rng.standard_normal((10, 32)) * 0.1, "w2"), t(np.zeros(10), "b2")]
nodes = [helper.make_node("Mul", ["data", "scale"], ["scaled"], name="scale"),
         helper.make_node("Sub", ["scaled", "mean"], ["normalised"], name="centre"),
         helper.make_node("Flatten", ["normalised"], ["flat"], name="flat"),
         helper.make_node("MatMul", ["flat", "w1"], ["h0"], name="fc1"), helper.make_node("Add", ["h0", "b1"], ["h1"]),
         helper.make_node("Relu", ["h1"], ["h"], name="relu"),
         helper.make_node("Gemm", ["h", "w2", "b2"], ["logits"], name="fc2", transB=1)]
g = helper.make_graph(nodes, "norm-mlp", [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["N", 1, 28, 28])],
                      [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
# the dataset the import run (and so its fork) trains on
m.metadata_props.add(key="dataset", value=sys.argv[2])
checker.check_model(m)
save(m, sys.argv[1])
# a foreign model: no dataset, no normalisation in its metadata
del m.metadata_props[:]
save(m, sys.argv[3])
PY
  epoch_losses() { python3 -c 'import json, sys; print(" ".join(str(json.loads(l)["train_loss"]) for l in sys.stdin if l.startswith("{")))'; }
  falls() { python3 -c 'import sys; l = [float(x) for x in sys.argv[1:]]; sys.exit(not (len(l) == 2 and l[1] < l[0]))' $1; }
  if out=$("$cli" import-onnx --project "$P" --name norm-mlp "$tmp/norm-mlp.onnx" 2>&1) \
     && imported=$(sed -n 's/.* in run \([0-9]*\);.*/\1/p' <<<"$out") && [ -n "$imported" ] \
     && out=$("$cli" fork --project "$P" --run "$imported" --epochs 2 --lr 0.05 --json 2>&1) \
     && tuned=$(python3 -c 'import json, sys; print([json.loads(l) for l in sys.stdin if l.startswith("{")][-1]["run"])' <<<"$out") \
     && losses=$(epoch_losses <<<"$out") && falls "$losses" \
     && "$cli" export --project "$P" --run "$imported" --onnx "$tmp/ft0.onnx" >/dev/null 2>&1 \
     && "$cli" export --project "$P" --run "$tuned" --onnx "$tmp/ft1.onnx" >/dev/null 2>&1 \
     && out=$("$py" - "$tmp/ft0.onnx" "$tmp/ft1.onnx" <<'PY' 2>&1
import sys
import numpy as np
import onnx
from onnx import numpy_helper
a, b = ({t.name: numpy_helper.to_array(t) for t in onnx.load(p).graph.initializer} for p in sys.argv[1:])
assert a.keys() == b.keys(), (a.keys(), b.keys())
changed = sorted(k for k in a if not np.array_equal(a[k], b[k]))
kept = sorted(k for k in a if k.endswith(".operand"))
assert len(kept) == 2 and not set(kept) & set(changed), (kept, changed)
assert len(changed) == 4, changed  # both layers' weights and biases
assert abs(float(a[kept[0]].ravel()[0]) - 1 / 0.31) < 1e-5 or abs(float(a[kept[1]].ravel()[0]) - 1 / 0.31) < 1e-5, a
print("changed:", " ".join(changed), "kept:", " ".join(kept))
PY
); then
    ok "an imported model with Mul and Sub fine-tunes (fork of its import run): losses $losses, $out"
  else
    not_ok "fine-tuning an imported model" "$out"
  fi
  if out=$("$cli" train --project "$P" --network norm-mlp --dataset "$D" --epochs 2 --lr 0.05 --threads 2 --json 2>&1) \
     && losses=$(epoch_losses <<<"$out") && falls "$losses"; then
    ok "train --network of the imported model learns (losses $losses)"
  else
    not_ok "train --network norm-mlp" "$out"
  fi
  # without dataset metadata: fork --dataset fine-tunes its weights on one
  if out=$("$cli" import-onnx --project "$P" --name foreign-mlp "$tmp/foreign-mlp.onnx" 2>&1) \
     && imported=$(sed -n 's/.* in run \([0-9]*\);.*/\1/p' <<<"$out") && [ -n "$imported" ] \
     && out=$("$cli" fork --project "$P" --run "$imported" --dataset "$D" --epochs 2 --lr 0.05 --json 2>&1) \
     && losses=$(epoch_losses <<<"$out") && falls "$losses"; then
    ok "fork --dataset fine-tunes an imported model without dataset metadata (losses $losses)"
  else
    not_ok "fork --dataset of a foreign import" "$out"
  fi
else
  skip "no Python with the onnx package to write the model to fine-tune"
fi

out=$("$cli" export --project "$P" --run 1 --onnx "$tmp/x.onnx" --opset 12 2>&1); s=$?
[ $s -eq 2 ] && grep -q "opset" <<<"$out" && [ ! -e "$tmp/x.onnx" ] && ok "export --opset 12 is refused" || not_ok "opset 12" "$out"
out=$("$cli" export --project "$P" --run 99 --onnx "$tmp/x.onnx" 2>&1); s=$?
[ $s -eq 1 ] && grep -q "99" <<<"$out" && [ ! -e "$tmp/x.onnx" ] && ok "export of a run that does not exist names it" || not_ok "run 99" "$out"

# evaluate: the run's stored accuracy, from the same numbers as the GUI
"$cli" evaluate --project "$P" --run 2 --json >"$tmp/ev.json" 2>&1 && "$cli" runs --project "$P" --json >"$tmp/runs.json" \
  && python3 - "$tmp/ev.json" "$tmp/runs.json" <<'PY' && ok "evaluate --json: the stored test accuracy, per-class scores and a confusion matrix that adds up" || not_ok "evaluate --json" "$(head -c 600 "$tmp/ev.json")"
import json, sys
ev = json.load(open(sys.argv[1]))
run = [r for r in map(json.loads, open(sys.argv[2])) if r["id"] == 2][0]
assert abs(ev["accuracy"] - run["best_test_accuracy"]) < 1e-9, (ev["accuracy"], run)
m = ev["confusion"]
assert len(m) == 10 and all(len(row) == 10 for row in m)
assert sum(map(sum, m)) == ev["samples"] == 256
assert sum(m[i][i] for i in range(10)) == ev["correct"]
for i, c in enumerate(ev["classes"]):
    assert c["support"] == sum(m[i]), c
    col = sum(m[k][i] for k in range(10))
    assert abs(c["precision"] - (m[i][i] / col if col else 0)) < 1e-12, c
    assert abs(c["recall"] - (m[i][i] / c["support"] if c["support"] else 0)) < 1e-12, c
PY
out=$("$cli" evaluate --project "$P" --network lenet 2>&1)
grep -q "^run 2, checkpoint" <<<"$out" && grep -q "confusion matrix" <<<"$out" && grep -q "precision  recall" <<<"$out" \
  && ok "evaluate --network lenet: the network's newest run, as text" || not_ok "evaluate --network" "$out"
out=$("$cli" evaluate --project "$P" --network nosuch 2>&1); s=$?
[ $s -eq 1 ] && grep -q "nosuch" <<<"$out" && ok "evaluate --network of an unknown network names it" || not_ok "evaluate unknown" "$out"
out=$("$cli" evaluate --project "$P" --run 1 --network mlp 2>&1); s=$?
[ $s -eq 2 ] && ok "evaluate with both --run and --network is a usage error" || not_ok "evaluate both" "$out"

# predict: dataset samples and a PNG file
out=$("$cli" predict --project "$P" --run 1 --dataset "$D" --limit 3 --top 2 --json 2>&1) && python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert [r["input"] for r in rows] == [0, 1, 2], rows
for r in rows:
    p = r["probabilities"]
    assert len(p) == 10 and abs(sum(p) - 1) < 1e-6, p
    assert len(r["top"]) == 2 and r["top"][0][1] == max(p) and r["top"][0][1] >= r["top"][1][1], r
    assert isinstance(r["top"][0][0], str) and r["label"]
' <<<"$out" && ok "predict --dataset --limit 3 --top 2 --json: one object per sample" || not_ok "predict dataset" "$out"
python3 - "$tmp/shirt.png" <<'PY'
import struct, sys, zlib
w = h = 28
rows = b"".join(b"\x00" + bytes(200 if 6 < x < 22 and y > 4 else 0 for x in range(w)) for y in range(h))
chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                              + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
PY
out=$("$cli" predict --project "$P" --network resnet-small --json --top 3 "$tmp/shirt.png" 2>&1) && python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["input"].endswith("shirt.png") and len(r["probabilities"]) == 10 and len(r["top"]) == 3, r
assert abs(sum(r["probabilities"]) - 1) < 1e-6
' <<<"$out" && ok "predict --json FILE.png: probabilities and top 3 with class names" || not_ok "predict png" "$out"
out=$("$cli" predict --project "$P" --run 1 "$tmp/none.png" 2>&1); s=$?
[ $s -eq 1 ] && grep -q "none.png" <<<"$out" && ok "predict names a missing file" || not_ok "predict missing" "$out"
out=$("$cli" predict --project "$P" --run 1 2>&1); s=$?
[ $s -eq 2 ] && ok "predict without files or --dataset is a usage error" || not_ok "predict usage" "$out"

echo "1..$n"
[ $failed -eq 0 ]
