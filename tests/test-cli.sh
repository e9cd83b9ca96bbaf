#!/usr/bin/env bash
# test-cli.sh — netloom-cli's interface as users and scripts rely on it:
# options, errors (one clear message, non-zero exit), JSON lines.
# Usage: test-cli.sh PATH/TO/netloom-cli   (TAP output)
set -u
cli="$1"
src="${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}"
tmp=$(mktemp -d)
. "$(dirname "$0")/cli-lib.sh"
trap 'rm -rf "$tmp"' EXIT


# expect_fail NAME STATUS NEEDLE -- ARGS...: exits with STATUS, one line on stderr containing NEEDLE
expect_fail() {
  local name="$1" want="$2" needle="$3"; shift 4
  local err status
  err=$("$cli" "$@" 2>&1 >/dev/null); status=$?
  if [ "$status" -ne "$want" ]; then not_ok "$name: exit $status, want $want" "$err"; return; fi
  if ! grep -qF -- "$needle" <<<"$err"; then not_ok "$name: message lacks '$needle'" "$err"; return; fi
  if [ "$(wc -l <<<"$err")" -gt 1 ]; then not_ok "$name: more than one line on stderr" "$err"; return; fi
  if grep -qiE 'segmentation|core dumped|CRITICAL|abort' <<<"$err"; then not_ok "$name: crashed" "$err"; return; fi
  ok "$name"
}

# small MNIST-format dataset: 256 train, 64 test images of 28x28
make_mnist "$tmp/data" 256 64

net="$src/data/networks/mlp.json"

out=$("$cli" train --help 2>&1); status=$?
missing=""
for opt in --network --dataset --epochs --batch-size --optimizer --lr --momentum --wd --seed --threads --json \
    --device --precision --loss-scale; do
  grep -q -- "$opt" <<<"$out" || missing="$missing $opt"
done
[ $status -eq 0 ] && [ -z "$missing" ] && ok "train --help documents every option" || not_ok "train --help (missing:$missing)" "$out"
# the defaults the help states are the run settings' (engine/train/nl-run-config.c's table)
if grep -Eq -- "--epochs=N +Epochs to train \(default 5\)" <<<"$out" \
   && grep -Eq -- "--batch-size=B +Samples per batch \(default 128\)" <<<"$out" \
   && grep -Eq -- "--val-fraction=F .*\(default 0.1\)" <<<"$out" \
   && grep -Eq -- "--scheduler-workers=N .*\(default 0\)" <<<"$out"; then
  ok "train --help states the settings' defaults"
else
  not_ok "train --help defaults" "$out"
fi

"$cli" --help | grep -q train && ok "--help lists commands" || not_ok "--help lists commands"

expect_fail "unknown command" 2 "unknown command 'frob'" -- frob
expect_fail "unknown option" 2 "Unknown option --frob" -- train --network "$net" --frob
expect_fail "bad number" 2 "--epochs" -- train --network "$net" --epochs many
expect_fail "zero epochs" 2 "--epochs must be at least 1" -- train --network "$net" --epochs 0
expect_fail "negative lr" 2 "--lr must be > 0" -- train --network "$net" --lr -1
expect_fail "unknown optimizer" 2 "sgd" -- train --network "$net" --optimizer sgdd
expect_fail "missing --network" 2 "--network FILE is required" -- train
expect_fail "missing network file" 1 "/nonexistent.json" -- train --network /nonexistent.json
echo '{"format":"netloom.network","version":1,"nodes":[{"id":"data","op":"Input"},{"id":"x","op":"Wibble"}],"edges":[]}' >"$tmp/bad.json"
expect_fail "unknown op" 1 "node 'x': unknown op 'Wibble'" -- train --network "$tmp/bad.json" --dataset "mnist:$tmp/data"
printf '{"format":' >"$tmp/trunc.json"
expect_fail "truncated network JSON" 1 "not valid JSON" -- train --network "$tmp/trunc.json"
python3 -c "import sys; sys.stdout.write('[' * 80000)" >"$tmp/deep.json"
expect_fail "deeply nested network JSON" 1 "$tmp/deep.json: not valid JSON: the network: JSON nested more than 256 levels deep" -- train --network "$tmp/deep.json"
: >"$tmp/empty.json"
expect_fail "empty network file" 1 "$tmp/empty.json: not valid JSON: the document is empty" -- train --network "$tmp/empty.json"
expect_fail "missing dataset" 1 "/nonexistent-data" -- train --network "$net" --dataset mnist:/nonexistent-data
expect_fail "unknown dataset kind" 1 "imagenet" -- train --network "$net" --dataset imagenet
cp -r "$tmp/data" "$tmp/trunc"
head -c 5000 "$tmp/data/train-images-idx3-ubyte" >"$tmp/trunc/train-images-idx3-ubyte"
expect_fail "truncated images" 1 "train-images-idx3-ubyte" -- train --network "$net" --dataset "mnist:$tmp/trunc"
cp -r "$tmp/data" "$tmp/mismatch"
python3 -c "import struct,sys; f=open(sys.argv[1],'r+b'); f.seek(4); f.write(struct.pack('>I',255)); f.close()" "$tmp/mismatch/train-labels-idx1-ubyte"
expect_fail "image/label count mismatch" 1 "256" -- train --network "$net" --dataset "mnist:$tmp/mismatch"
expect_fail "NaN loss: the node that made it" 1 "made the first" -- train --network "$net" --dataset "mnist:$tmp/data" --lr 1e30 --epochs 1

out=$("$cli" train --network "$net" --dataset "mnist:$tmp/data" --epochs 2 --batch-size 32 --json 2>&1); status=$?
lines=$(grep -c '^{' <<<"$out")
if [ $status -eq 0 ] && [ "$lines" -eq 2 ] && python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
assert len(rows) == 2, rows
for i, r in enumerate(rows, 1):
    for k in ("epoch", "seconds", "images_per_s", "train_loss", "train_acc", "test_acc"):
        assert k in r, k
    assert r["epoch"] == i and r["seconds"] > 0 and r["images_per_s"] > 0
assert rows[1]["test_acc"] > 0.5, rows
' <<<"$out"; then ok "--json prints one object per epoch"; else not_ok "--json output" "$out"; fi

a=$("$cli" train --network "$net" --dataset "mnist:$tmp/data" --epochs 1 --threads 2 --seed 3 --json | sed 's/"seconds".*"train_loss"/X/; s/"peak_rss_mb".*//')
b=$("$cli" train --network "$net" --dataset "mnist:$tmp/data" --epochs 1 --threads 2 --seed 3 --json | sed 's/"seconds".*"train_loss"/X/; s/"peak_rss_mb".*//')
[ -n "$a" ] && [ "$a" = "$b" ] && ok "same seed, same results" || not_ok "same seed, same results" "$a
$b"

out=$("$cli" train --network "$net" --dataset "mnist:$tmp/data" --epochs 1 2>&1); status=$?
[ $status -eq 0 ] && grep -q "epoch 1/1" <<<"$out" && ok "readable summary without --json" || not_ok "readable summary" "$out"

# packed records: pack the small set, train on it; same numbers as the source
out=$("$cli" pack --dataset "mnist:$tmp/data" --output "$tmp/train.rec" 2>&1); s1=$?
out2=$("$cli" pack --dataset "mnist:$tmp/data" --test --output "$tmp/test.rec" 2>&1); s2=$?
[ $s1 -eq 0 ] && [ $s2 -eq 0 ] && [ -s "$tmp/train.rec" ] && ok "pack writes a record file" || not_ok "pack" "$out $out2"
mkdir -p "$tmp/packed"
a=$("$cli" train --network "$net" --dataset "mnist:$tmp/data" --epochs 1 --threads 2 --json | sed 's/"seconds".*"train_loss"/X/; s/"peak_rss_mb".*//')
b=$("$cli" train --network "$net" --dataset "packed:$tmp/train.rec" --mean 0.13 --std 0.31 --epochs 1 --threads 2 --json 2>&1 | sed 's/"seconds".*"train_loss"/X/; s/"peak_rss_mb".*//; s/"test_acc":[0-9.]*,//')
a2=$(sed 's/"test_acc":[0-9.]*,//' <<<"$a")
[ -n "$a2" ] && [ "$a2" = "$b" ] && ok "training on the packed file matches the source" || not_ok "packed training" "$a2
$b"

# the loader's thread count never changes the numbers
a=$("$cli" train --network "$net" --dataset "mnist:$tmp/data" --epochs 1 --workers 0 --augment random-crop:28:2,flip --json | sed 's/"seconds".*"train_loss"/X/; s/"peak_rss_mb".*//')
b=$("$cli" train --network "$net" --dataset "mnist:$tmp/data" --epochs 1 --workers 3 --augment random-crop:28:2,flip --json | sed 's/"seconds".*"train_loss"/X/; s/"peak_rss_mb".*//')
[ -n "$a" ] && [ "$a" = "$b" ] && ok "--workers 0 and 3 give the same results" || not_ok "--workers determinism" "$a
$b"

expect_fail "bad augment" 1 "wobble" -- train --network "$net" --dataset "mnist:$tmp/data" --augment flip,wobble
expect_fail "bad workers" 2 "--workers" -- train --network "$net" --workers -1
printf 'a,b,label\n1,2,0\n3,4\n' >"$tmp/ragged.csv"
expect_fail "ragged csv" 1 "ragged.csv:3: 2 columns, expected 3" -- train --network "$net" --dataset "csv:$tmp/ragged.csv"
printf 'a,b,label\n1,x,0\n' >"$tmp/cell.csv"
expect_fail "non-numeric csv cell" 1 "cell.csv:2: column 1 ('b') is not a number: 'x'" -- train --network "$net" --dataset "csv:$tmp/cell.csv"
mkdir -p "$tmp/empty"
expect_fail "empty image folder" 1 "$tmp/empty" -- train --network "$net" --dataset "folder:$tmp/empty"
head -c 3000 "$tmp/train.rec" >"$tmp/trunc.rec"
expect_fail "truncated packed file" 1 "trunc.rec" -- train --network "$net" --dataset "packed:$tmp/trunc.rec"
expect_fail "pack needs output" 2 "--output FILE" -- pack --dataset "mnist:$tmp/data"

# a validation split by file: the same features with every label wrong
python3 - "$tmp" <<'PY'
import random, sys
random.seed(2)
rows = []
for i in range(400):
    c = i % 3
    rows.append([random.gauss(c * 3, 0.5) for _ in range(4)] + [c])
open(sys.argv[1] + "/good.csv", "w").write("a,b,c,d,label\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
open(sys.argv[1] + "/bad.csv", "w").write("a,b,c,d,label\n" + "".join(",".join(map(str, r[:4] + [(r[4] + 1) % 3])) + "\n" for r in rows))
PY
echo '{"format":"netloom.network","version":1,"nodes":[{"id":"data","op":"Input"},{"id":"fc","op":"Dense","params":{"units":3}}],"edges":["data -> fc"]}' >"$tmp/lin.json"
out=$("$cli" train --network "$tmp/lin.json" --dataset "csv:$tmp/good.csv" --val-dataset "csv:$tmp/bad.csv" --epochs 10 --batch-size 16 --optimizer adam --lr 0.05 --mean 3 --std 2.5 --json 2>&1)
tail -1 <<<"$out" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["train_acc"] > 0.85 and r["test_acc"] < 0.1, r
' && ok "--val-dataset evaluates on the other file" || not_ok "--val-dataset" "$out"

out=$("$cli" plan --network "$src/data/networks/lenet.json" --json 2>&1)
python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["training_planned_bytes"] <= 0.6 * r["training_naive_bytes"], r
assert r["inference_planned_bytes"] <= 0.5 * r["inference_naive_bytes"], r
' <<<"$out" && ok "plan --json meets the planner targets" || not_ok "plan --json" "$out"

# devices: the CPU first; with no GPU listed, a reason
out=$("$cli" devices 2>&1); status=$?
[ $status -eq 0 ] && head -1 <<<"$out" | grep -qE '^cpu +.+, [0-9]+ cores?, [0-9.]+ [KMGT]?i?B \([0-9.]+ [KMGT]?i?B free\)$' \
  && ok "devices lists the CPU first" || not_ok "devices" "$out"
json=$("$cli" devices --json 2>&1)
gpus=$(python3 -c '
import json, os, re, sys
r = json.loads(sys.stdin.read())
d = r["devices"]
assert d[0]["id"] == "cpu" and d[0]["type"] == "cpu", d
assert d[0]["cores"] == len(os.sched_getaffinity(0)) and d[0]["memory_bytes"] > d[0]["free_bytes"] > 0, d[0]
cuda = [x for x in d if x["type"] == "cuda"]
for x in cuda:
    assert re.fullmatch(r"cuda:[0-9]+", x["id"]) and re.fullmatch(r"[0-9]+\.[0-9]+", x["compute_capability"]), x
    assert x["multiprocessors"] > 0 and x["memory_bytes"] >= x["free_bytes"], x
# a reason exactly when no GPU is listed
assert (r["cuda_reason"] is None) == (len(cuda) > 0), r
assert r["cuda_reason"] is None or r["cuda_reason"].strip(), r
print(len(cuda))
' <<<"$json") && ok "devices --json parses, CPU entry, cuda_reason iff no GPU" || not_ok "devices --json" "$json"
if [ "${gpus:-0}" = 0 ]; then
  grep -qF "no GPU: $(python3 -c 'import json,sys; print(json.load(sys.stdin)["cuda_reason"])' <<<"$json")" <<<"$out" \
    && ok "devices says why there is no GPU" || not_ok "devices: no GPU line" "$out"
fi

expect_fail "unknown device" 2 "'bogus'" -- train --network "$net" --device bogus
expect_fail "unknown precision" 2 "'fp8'" -- train --network "$net" --precision fp8
expect_fail "bad loss scale" 2 "--loss-scale" -- train --network "$net" --precision fp16 --loss-scale 0
"$cli" project new --sample "$tmp/dev.netloom" >/dev/null 2>&1
if [ "${gpus:-0}" = 0 ]; then
  reason=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["cuda_reason"])' <<<"$json")
  expect_fail "--device cuda:0 without a GPU" 2 "cuda:0: no CUDA device: $reason" -- \
    train --network mlp --project "$tmp/dev.netloom" --dataset "mnist:$tmp/data" --device cuda:0 --epochs 1
  expect_fail "--device cuda without a GPU" 2 "cuda:0" -- \
    train --network "$net" --dataset "mnist:$tmp/data" --device cuda --epochs 1
else
  expect_fail "--device past the last GPU" 2 "cuda:$gpus: no such device" -- \
    train --network mlp --project "$tmp/dev.netloom" --dataset "mnist:$tmp/data" --device "cuda:$gpus" --epochs 1
fi
runs=$("$cli" runs --project "$tmp/dev.netloom" --json 2>&1)
[ -z "$runs" ] && ok "an absent device leaves no run in the project" || not_ok "runs after a bad --device" "$runs"

# --precision flows into the stored run (the CPU emulates the rounding)
out=$("$cli" train --network mlp --project "$tmp/dev.netloom" --dataset "mnist:$tmp/data" --epochs 1 --batch-size 64 \
  --precision bf16 --device cpu --json 2>&1) && python3 - "$tmp/dev.netloom" <<'PY' && ok "--precision bf16 trains on the CPU and is stored with the run" || not_ok "--precision bf16" "$out"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT device, status, hparams_json FROM runs").fetchall()
assert len(rows) == 1, rows
device, status, hp = rows[0]
hp = json.loads(hp)
assert device == "cpu" and status == "finished", rows
assert hp["precision"] == "bf16", hp
PY
out=$("$cli" train --network mlp --project "$tmp/dev.netloom" --dataset "mnist:$tmp/data" --epochs 1 --batch-size 64 \
  --precision fp16 --loss-scale 1024 --json 2>&1) && python3 - "$tmp/dev.netloom" <<'PY' && ok "--precision fp16 --loss-scale is stored with the run" || not_ok "--precision fp16" "$out"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
device, hp = db.execute("SELECT device, hparams_json FROM runs ORDER BY id DESC LIMIT 1").fetchone()
hp = json.loads(hp)
assert device == "cpu" and hp["precision"] == "fp16" and hp["loss_scale"] == 1024, (device, hp)
PY

# the templates take their input shape from the data (deferred, as Gluon's
# shape inference): lenet and resnet-small train on CIFAR-10's 3x32x32, mlp
# on a CSV's 6 features, with no edits
python3 - "$tmp/cifar" "$tmp/six.csv" <<'PY'
import os, random, sys
random.seed(2)
os.makedirs(sys.argv[1])
for name in ["data_batch_%d.bin" % i for i in range(1, 6)] + ["test_batch.bin"]:
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        for k in range(16):
            f.write(bytes([k % 10]) + bytes(random.randrange(256) for _ in range(3072)))
rows = [[round(random.random(), 3) for _ in range(6)] + [k % 3] for k in range(120)]
open(sys.argv[2], "w").write("a,b,c,d,e,f,label\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
PY
for t in lenet resnet-small; do
  out=$("$cli" train --network "$src/data/networks/$t.json" --dataset "cifar10:$tmp/cifar" --epochs 1 --batch-size 16 \
    --json 2>&1) && grep -q '"epoch":1' <<<"$out" && ok "the $t template trains on 3x32x32 CIFAR-10 images unedited" \
    || not_ok "$t on CIFAR-10" "$out"
done
out=$("$cli" train --network "$src/data/networks/mlp.json" --dataset "csv:$tmp/six.csv" --epochs 1 --batch-size 16 \
  --json 2>&1) && grep -q '"epoch":1' <<<"$out" && ok "the mlp template trains on a 6-column CSV unedited" || not_ok "mlp on CSV" "$out"
out=$("$cli" plan --network "$src/data/networks/lenet.json" --input-shape 3,32,32 2>&1) && grep -q "training:" <<<"$out" \
  && [ "$out" != "$("$cli" plan --network "$src/data/networks/lenet.json" 2>&1)" ] \
  && ok "plan --input-shape 3,32,32 of the lenet template plans for that shape" || not_ok "plan lenet 3x32x32" "$out"
sed 's/"op": "Input"/"op": "Input", "params": { "shape": [1, 28, 28] }/' "$src/data/networks/lenet.json" >"$tmp/pinned.json"
expect_fail "a fixed Input shape still refuses other data" 1 "Input expects (1, 28, 28)" -- \
  train --network "$tmp/pinned.json" --dataset "cifar10:$tmp/cifar" --epochs 1 --batch-size 16

echo "1..$n"
[ $failed -eq 0 ]
