#!/usr/bin/env bash
# test-quantize-cli.sh — INT8 post-training quantization from the command
# line: LeNet trained one epoch on a small MNIST-format set, quantize --json
# with naive and entropy calibration (the keys, INT8 accuracy within 0.02 of
# fp32's, images/s > 0, the row stored with those figures), evaluate --int8
# and predict --int8 agreeing with the stored accuracy, evaluate's and
# predict's speed keys, runs listing the INT8 models, deleting the run
# deleting them, and each bad input (no checkpoint, no Conv2D or Dense, more
# calibration samples than the training split, an unknown method, a run
# without INT8 model) failing with one message and no row written.
# Usage: test-quantize-cli.sh PATH/TO/netloom-cli (TAP)
set -u
cli="$1"
tmp=$(mktemp -d)
. "$(dirname "$0")/cli-lib.sh"
trap 'rm -rf "$tmp"' EXIT

# Fashion-MNIST's first 4096 training and 300 test images (synthetic bands without the package)
fm=/usr/share/datasets/fashion-mnist
if [ -f "$fm/train-images-idx3-ubyte.gz" ]; then
  python3 - "$fm" "$tmp/data" <<'PY'
import gzip, os, struct, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst)
for name, n, header in (("train-images-idx3-ubyte", 4096, 16), ("train-labels-idx1-ubyte", 4096, 8),
                        ("t10k-images-idx3-ubyte", 300, 16), ("t10k-labels-idx1-ubyte", 300, 8)):
    d = gzip.open(os.path.join(src, name + ".gz")).read()
    size = 784 if header == 16 else 1
    open(os.path.join(dst, name), "wb").write(d[:4] + struct.pack(">I", n) + d[8:header] + d[header:header + n * size])
PY
  D="fashion-mnist:$tmp/data"
else
  echo "# $fm is absent (Debian dataset-fashion-mnist): synthetic images instead"
  make_mnist "$tmp/data" 4096 300
  D="mnist:$tmp/data"
fi
P="$tmp/p.netloom"
rows() { sql "$P" "SELECT count (*) FROM int8_models"; }

out=$("$cli" project new --sample "$P" 2>&1) || not_ok "project new" "$out"
out=$("$cli" train --project "$P" --network lenet --dataset "$D" --epochs 1 --threads 2 --json 2>&1) \
  || not_ok "train lenet" "$out"

# ---- quantize, both methods ----
for m in naive entropy; do
  if "$cli" quantize --project "$P" --run 1 --calibration 256 --method $m --json >"$tmp/q-$m.json" 2>"$tmp/q-$m.err" \
     && [ "$(wc -l <"$tmp/q-$m.json")" -eq 1 ] \
     && check=$(python3 - "$tmp/q-$m.json" "$m" "$P" <<'PY'
import json, sqlite3, sys
q = json.load(open(sys.argv[1]))
for k in ("fp32_test_acc", "int8_test_acc", "fp32_images_per_s", "int8_images_per_s", "run", "int8_model", "epoch",
          "method", "calibration_samples"):
    assert k in q, "no key " + k
assert q["method"] == sys.argv[2] and q["calibration_samples"] == 256 and q["run"] == 1 and q["epoch"] == 1, q
assert q["fp32_test_acc"] > 0.3, "fp32 did not learn: %s" % q
assert abs(q["int8_test_acc"] - q["fp32_test_acc"]) <= 0.02, q
assert q["fp32_images_per_s"] > 0 and q["int8_images_per_s"] > 0, q
assert len(q["points"]) >= 4 and all(0 < p["threshold"] <= max(abs(p["min"]), abs(p["max"])) * 1.0001
                                     for p in q["points"]), q["points"]
row = sqlite3.connect(sys.argv[3]).execute(
    "SELECT run, epoch, method, calibration_samples, fp32_test_acc, int8_test_acc, fp32_images_per_s,"
    " int8_images_per_s, size, length (blob) FROM int8_models WHERE id = ?", (q["int8_model"],)).fetchone()
assert row[:4] == (1, 1, sys.argv[2], 256), row
# as printed: accuracies with 6 decimals, speeds with 1
assert abs(row[4] - q["fp32_test_acc"]) <= 5e-7 and abs(row[5] - q["int8_test_acc"]) <= 5e-7, row
assert abs(row[6] - q["fp32_images_per_s"]) <= 0.05 and abs(row[7] - q["int8_images_per_s"]) <= 0.05, row
assert row[8] == row[9] > 0, row
print("fp32 %.4f, int8 %.4f, %.0f / %.0f images/s" % (q["fp32_test_acc"], q["int8_test_acc"],
                                                      q["fp32_images_per_s"], q["int8_images_per_s"]))
PY
); then
    ok "quantize --method $m --json: $check, stored as printed"
  else
    not_ok "quantize --method $m" "$(cat "$tmp/q-$m.json" "$tmp/q-$m.err") $check"
  fi
done
[ "$(rows)" -eq 2 ] && ok "two INT8 models stored" || not_ok "two INT8 models stored" "$(rows)"

# the blob: safetensors with the checkpoint's tensor names and the metadata
if python3 - "$P" <<'PY'
import json, sqlite3, struct, sys, zlib
blob = sqlite3.connect(sys.argv[1]).execute("SELECT blob FROM int8_models ORDER BY id DESC LIMIT 1").fetchone()[0]
n = struct.unpack("<Q", blob[:8])[0]
h = json.loads(blob[8:8 + n])
meta = h.pop("__metadata__")
assert meta["format"] == "netloom.int8" and meta["epoch"] == "1" and len(meta["network_hash"]) == 64, meta
assert "%08x" % zlib.crc32(blob[8 + n:]) == meta["crc32"], meta["crc32"]
t = json.loads(meta["quant_table"])
assert t["method"] == "entropy" and t["calibration_samples"] == 256 and len(t["ranges"]) >= 4, t
assert all(v["dtype"] == "F32" for v in h.values()) and not any(k.startswith("optimizer/") for k in h), list(h)
PY
then ok "the blob is netloom.int8: fp32 weights, the table, epoch, network hash and crc32"; else not_ok "the blob"; fi

# ---- evaluate and predict with it ----
int8_acc=$(sql "$P" "SELECT int8_test_acc FROM int8_models ORDER BY id DESC LIMIT 1")
fp32_acc=$(sql "$P" "SELECT fp32_test_acc FROM int8_models ORDER BY id DESC LIMIT 1")
if "$cli" evaluate --project "$P" --run 1 --int8 --json >"$tmp/ev8.json" 2>&1 \
   && "$cli" evaluate --project "$P" --run 1 --json >"$tmp/ev.json" 2>&1 \
   && python3 - "$tmp/ev8.json" "$tmp/ev.json" "$int8_acc" "$fp32_acc" <<'PY'
import json, sys
e8, e = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert abs(e8["accuracy"] - float(sys.argv[3])) < 1e-9, (e8["accuracy"], sys.argv[3])
assert abs(e["accuracy"] - float(sys.argv[4])) < 1e-9, (e["accuracy"], sys.argv[4])
assert e8["int8_model"] == 2 and e["int8_model"] is None, (e8["int8_model"], e["int8_model"])
assert e8["images_per_s"] > 0 and e["images_per_s"] > 0
assert e8["samples"] == 300 and sum(map(sum, e8["confusion"])) == 300
PY
then ok "evaluate --int8: the stored INT8 accuracy ($int8_acc), evaluate the fp32 one ($fp32_acc), both with images_per_s"
else not_ok "evaluate --int8" "$(head -c 400 "$tmp/ev8.json") $(head -c 300 "$tmp/ev.json")"; fi

if "$cli" predict --project "$P" --run 1 --int8 --dataset "$D" --json >"$tmp/pr8.json" 2>&1 \
   && python3 - "$tmp/pr8.json" "$int8_acc" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 300
acc = sum(l["top"][0][0] == l["label"] for l in lines) / len(lines)
assert abs(acc - float(sys.argv[2])) < 1e-9, (acc, sys.argv[2])
assert all(l["latency_ms"] > 0 and l["images_per_s"] > 0 for l in lines)
PY
then ok "predict --int8 over the test split: the stored INT8 accuracy, latency_ms and images_per_s per input"
else not_ok "predict --int8" "$(head -c 400 "$tmp/pr8.json")"; fi

out=$("$cli" predict --project "$P" --run 1 --dataset "$D" --limit 1 --json 2>&1)
python3 -c 'import json, sys; l = json.loads(sys.argv[1]); assert l["latency_ms"] > 0 and l["images_per_s"] > 0' "$out" \
  && ok "predict of one input (fp32): latency_ms and images_per_s" || not_ok "predict one input" "$out"

out=$("$cli" evaluate --project "$P" --run 1 --int8 --checkpoint 1 2>&1)
grep -q "INT8 model 2" <<<"$out" && grep -q "images/s" <<<"$out" \
  && ok "evaluate --int8 --checkpoint 1 as text names the INT8 model" || not_ok "evaluate --int8 text" "$out"

out=$("$cli" runs --project "$P" --json 2>&1)
python3 -c 'import json, sys; r = json.loads(sys.argv[1].splitlines()[0]); m = r["int8_models"]
assert [x["method"] for x in m] == ["naive", "entropy"] and all(x["epoch"] == 1 for x in m), m' "$out" \
  && "$cli" runs --project "$P" | grep -q "int8 model 2: checkpoint" \
  && ok "runs lists the run's INT8 models (text and --json)" || not_ok "runs" "$out"

out=$("$cli" quantize --project "$P" --run 1 --calibration 64 --method naive 2>&1)
grep -q "threshold" <<<"$out" && grep -q "images/s" <<<"$out" && grep -q "^int8 " <<<"$out" \
  && ok "quantize as text: accuracy, images/s and the per-point ranges" || not_ok "quantize text" "$out"

# ---- bad input: one message, nothing written ----
# run 2: run 1's network and settings without a checkpoint; run 3: a network
# without Conv2D or Dense, with run 1's checkpoint
python3 - "$P" <<'PY'
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO runs (name, network_name, network_json, hparams_json, status, created)"
          " SELECT 'empty', network_name, network_json, hparams_json, 'failed', created FROM runs WHERE id = 1")
net = {"format": "netloom.network", "version": 1, "name": "flat",
       "nodes": [{"id": "data", "op": "Input"}, {"id": "flatten", "op": "Flatten"}], "edges": ["data:0 -> flatten:0"]}
c.execute("INSERT INTO runs (name, network_name, network_json, hparams_json, status, created)"
          " SELECT 'flat', 'flat', ?, hparams_json, 'finished', created FROM runs WHERE id = 1", (json.dumps(net),))
c.execute("INSERT INTO checkpoints (run, epoch, step, is_best, created, size, blob)"
          " SELECT 3, epoch, step, 1, created, size, blob FROM checkpoints WHERE run = 1")
c.commit()
PY
before=$(rows)
bad() { # bad WHAT EXPECTED-WORDS ARGS...
  local what="$1" words="$2"; shift 2
  out=$("$cli" quantize --project "$P" "$@" 2>&1); s=$?
  if [ $s -ne 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "$words" <<<"$out" && [ "$(rows)" -eq "$before" ]; then
    ok "quantize $what: exit $s, one message, nothing stored"
  else
    not_ok "quantize $what (exit $s)" "$out"
  fi
}
bad "of a run without checkpoint" "checkpoint" --run 2
bad "of a network without Conv2D or Dense" "no Conv2D or Dense" --run 3
bad "with more calibration samples than the training split" "has 4096" --run 1 --calibration 5000
bad "with an unknown method" "naive or entropy" --run 1 --method kl
bad "of a run that does not exist" "run" --run 99
out=$("$cli" evaluate --project "$P" --run 3 --int8 2>&1); s=$?
[ $s -ne 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "run 3 has no INT8 model: run netloom-cli quantize first" <<<"$out" \
  && ok "evaluate --int8 of a run without INT8 model says so" || not_ok "evaluate --int8 without model" "$out"

# ---- the run's deletion takes them along ----
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA foreign_keys = ON")
c.execute("DELETE FROM runs WHERE id = 1"); c.commit()' "$P"
[ "$(rows)" -eq 0 ] && ok "deleting the run deletes its INT8 models" || not_ok "cascade" "$(rows)"

echo "1..$n"
exit $((failed > 0))
