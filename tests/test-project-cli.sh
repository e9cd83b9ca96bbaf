#!/usr/bin/env bash
# test-project-cli.sh — projects through netloom-cli as users drive them:
# runs stored with metrics and checkpoints, resume bit for bit, fork
# lineage, watch from a second process, kill -9 in the middle of training,
# export read by an independent safetensors parser, import with missing and
# extra names. Usage: test-project-cli.sh PATH/TO/netloom-cli   (TAP)
set -u
cli="$1"
src="${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}"
tmp=$(mktemp -d)
. "$(dirname "$0")/cli-lib.sh"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

make_mnist "$tmp/data" 2048 256
P="$tmp/p.netloom"
D="mnist:$tmp/data"
train() { "$cli" train --project "$P" --dataset "$D" --threads 2 --json "$@"; }

out=$("$cli" project new --sample "$P" 2>&1) && "$cli" project info --json "$P" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["integrity"] == "ok" and r["schema_version"] >= 1, r
assert sorted(x["name"] for x in r["networks"]) == ["lenet", "mlp", "resnet-small"], r
' && ok "project new --sample has the three networks" || not_ok "project new --sample" "$out"
expect_exists=$("$cli" project new "$P" 2>&1); [ $? -eq 2 ] && grep -q "exists already" <<<"$expect_exists" && ok "project new never overwrites" || not_ok "project new overwrite" "$expect_exists"

train --network mlp --epochs 4 --name straight >"$tmp/straight.json" && train --network mlp --epochs 2 --name split >/dev/null \
  && "$cli" resume --project "$P" --run 2 --epochs 4 --json >"$tmp/resumed.json" \
  && "$cli" export --project "$P" --run 1 --safetensors "$tmp/a.safetensors" >/dev/null \
  && "$cli" export --project "$P" --run 2 --safetensors "$tmp/b.safetensors" >/dev/null \
  && cmp -s "$tmp/a.safetensors" "$tmp/b.safetensors" && [ "$(tail -1 "$tmp/straight.json" | sed 's/"run":[0-9]*,//; s/"seconds".*"train_loss"//; s/"peak.*//')" = "$(tail -1 "$tmp/resumed.json" | sed 's/"run":[0-9]*,//; s/"seconds".*"train_loss"//; s/"peak.*//')" ] \
  && ok "4 epochs straight = 2 + resume 2, bit for bit" || not_ok "resume equivalence" "$(cat "$tmp/straight.json" "$tmp/resumed.json")"

python3 "$src/tests/safetensors_check.py" "$tmp/a.safetensors" >"$tmp/check.json" 2>&1 && python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
names = r["tensors"]
assert names["fc1.weight"]["shape"] == [256, 784], names["fc1.weight"]
assert names["fc2.bias"]["shape"] == [10], names["fc2.bias"]
assert not any(k.startswith("optimizer/") for k in names), "export must hold weights only"
' "$tmp/check.json" && ok "export is read by an independent safetensors parser" || not_ok "export parsed" "$(head -c 600 "$tmp/check.json")"

out=$("$cli" fork --project "$P" --run 1 --checkpoint last --lr 0.05 --epochs 6 --name lower-lr --json 2>&1)
"$cli" runs --project "$P" --json | python3 -c '
import json, sys
runs = {r["id"]: r for r in map(json.loads, sys.stdin)}
child = [r for r in runs.values() if r["name"] == "lower-lr"][0]
assert child["parent_run"] == 1 and child["status"] == "finished", child
assert abs(child["lr"] - 0.05) < 1e-9 and child["epochs_done"] == 6, child
assert runs[1]["best_test_accuracy"] is not None and runs[1]["status"] == "finished"
' && [ "$(grep -c '^{' <<<"$out")" -eq 2 ] && ok "fork from the last checkpoint with --lr records lineage and trains epochs 5-6" || not_ok "fork" "$out"

out=$("$cli" fork --project "$P" --run 1 --checkpoint last --epochs 5 --precision bf16 --device cpu --name bf16-fork 2>&1)
"$cli" runs --project "$P" --json | python3 -c '
import json, sys
child = [r for r in map(json.loads, sys.stdin) if r["name"] == "bf16-fork"][0]
assert child["precision"] == "bf16" and child["device"] == "cpu" and child["status"] == "finished", child
' && ok "fork --precision bf16 --device cpu trains and stores both" || not_ok "fork precision" "$out"
n_before=$("$cli" runs --project "$P" --json | wc -l)
out=$("$cli" fork --project "$P" --run 1 --device cuda:7 2>&1); s=$?
[ $s -eq 2 ] && grep -q "cuda:7" <<<"$out" && [ "$n_before" -eq "$("$cli" runs --project "$P" --json | wc -l)" ] \
  && ok "fork --device to a missing GPU is refused before any run" || not_ok "fork missing device" "$out"

"$cli" metrics --project "$P" --run 1 --csv | python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
batch = [r for r in rows if r["name"] == "batch_loss"]
acc = [r for r in rows if r["name"] == "accuracy" and r["split"] == "test"]
assert len(batch) == 4 * 16, len(batch)
assert [int(r["epoch"]) for r in acc] == [1, 2, 3, 4], acc
steps = [int(r["step"]) for r in batch]
assert steps == sorted(steps) and steps[0] == 1 and steps[-1] == 64, steps[:3]
' && ok "metrics --csv holds every batch and epoch point" || not_ok "metrics --csv"

# a second process follows a run while it trains
"$cli" train --project "$P" --dataset "$D" --threads 2 --json --network lenet --epochs 3 --batch-size 32 \
  --name watched >/dev/null 2>&1 &
trainer=$!
for i in $(seq 300); do "$cli" runs --project "$P" --json 2>/dev/null | grep -q '"name":"watched","status":"running"' && break; sleep 0.2; done
watched=$("$cli" runs --project "$P" --json | python3 -c 'import json,sys; print([r["id"] for r in map(json.loads, sys.stdin) if r["name"] == "watched"][0])')
wout=$(timeout 120 "$cli" watch --project "$P" --run "$watched" 2>&1); ws=$?
wait $trainer; ts=$?
[ $ws -eq 0 ] && [ $ts -eq 0 ] && grep -q "run $watched finished" <<<"$wout" && [ "$(grep -c 'batch_loss' <<<"$wout")" -ge 100 ] \
  && ! grep -qi "locked" <<<"$wout" && ok "watch follows a run another process trains, no lock errors" || not_ok "watch" "$(tail -5 <<<"$wout")"

# kill -9 in the middle of training: the project stays sound, the run is resumable
# (64 steps an epoch: it stops itself at step 80, in epoch 2, after epoch 1's checkpoint)
NETLOOM_TEST_STOP_AT_STEP=80 "$cli" train --project "$P" --dataset "$D" --threads 2 --json --network lenet --epochs 4 \
  --batch-size 32 --name killed >/dev/null 2>&1 &
victim=$!   # the CLI itself, not a subshell
wait_stopped $victim
kill -9 $victim; wait $victim 2>/dev/null
info=$("$cli" project info "$P" 2>&1); s1=$?
killed=$("$cli" runs --project "$P" --json | python3 -c 'import json,sys; print([r["id"] for r in map(json.loads, sys.stdin) if r["name"] == "killed"][0])')
status=$("$cli" runs --project "$P" --json | python3 -c "import json,sys; print([r['status'] for r in map(json.loads, sys.stdin) if r['id'] == $killed][0])")
rout=$("$cli" resume --project "$P" --run "$killed" --json 2>&1); s2=$?
[ $s1 -eq 0 ] && grep -q "integrity ok" <<<"$info" && [ "$status" = interrupted ] && [ $s2 -eq 0 ] && grep -q '"epoch":4' <<<"$rout" \
  && ok "kill -9: integrity ok, run interrupted, resumed to the end" || not_ok "kill -9" "$info / status $status / $rout"

# a run killed before its first epoch has no accuracy yet: "–", not "nan"
# (it stops itself before its first step)
NETLOOM_TEST_STOP_AT_STEP=0 "$cli" train --project "$P" --dataset "$D" --threads 2 --network lenet --epochs 4 \
  --batch-size 32 --name unmeasured >/dev/null 2>&1 &
victim=$!
wait_stopped $victim
kill -9 $victim; wait $victim 2>/dev/null
line=$("$cli" runs --project "$P" 2>&1 | grep " unmeasured$")
grep -q "test acc best – last –" <<<"$line" && ! grep -qi "nan" <<<"$line" \
  && ok "runs: metrics not measured yet show as –" || not_ok "runs before the first epoch" "$line"

# import: weights exported from mlp into the mlp network; a file of other names reports missing and extra
out=$("$cli" import-weights --project "$P" --network mlp --safetensors "$tmp/a.safetensors" 2>&1) && grep -q "imported" <<<"$out" \
  && ok "import-weights of a matching file" || not_ok "import matching" "$out"
python3 - "$tmp/other.safetensors" <<'PY'
import json, struct, sys
head = json.dumps({"other.weight": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}}).encode()
head += b" " * (-len(head) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(head)) + head + struct.pack("<3f", 1, 2, 3))
PY
out=$("$cli" import-weights --project "$P" --network mlp --safetensors "$tmp/other.safetensors" 2>&1); s=$?
[ $s -ne 0 ] && grep -q "missing.*fc1.weight" <<<"$out" && grep -q "extra.*other.weight" <<<"$out" \
  && ok "import-weights names missing and extra tensors" || not_ok "import mismatch" "$out"

# --restore-best: every epoch ties at accuracy 1.0, so epoch 1 is the best;
# the run must end with exactly epoch 1's weights
out=$(train --network mlp --epochs 3 --name restored --restore-best 2>&1)
rid=$("$cli" runs --project "$P" --json | python3 -c 'import json,sys; print([r["id"] for r in map(json.loads, sys.stdin) if r["name"] == "restored"][0])')
"$cli" export --project "$P" --run "$rid" --checkpoint last --safetensors "$tmp/last.st" >/dev/null \
  && "$cli" export --project "$P" --run "$rid" --checkpoint 1 --safetensors "$tmp/e1.st" >/dev/null \
  && "$cli" export --project "$P" --run 1 --checkpoint 1 --safetensors "$tmp/s1.st" >/dev/null \
  && cmp -s "$tmp/last.st" "$tmp/e1.st" && cmp -s "$tmp/e1.st" "$tmp/s1.st" && ! cmp -s "$tmp/a.safetensors" "$tmp/s1.st" \
  && ok "--restore-best ends the run with the best epoch's weights" || not_ok "--restore-best" "$out"

# best by the lowest training loss, keeping one newest checkpoint: epochs 2
# and 3 of 3 are pruned or kept as the rule says
train --network mlp --epochs 4 --name by-loss --checkpoint-metric train_loss --keep-checkpoints 1 >/dev/null
lid=$("$cli" runs --project "$P" --json | python3 -c 'import json,sys; print([r["id"] for r in map(json.loads, sys.stdin) if r["name"] == "by-loss"][0])')
"$cli" export --project "$P" --run "$lid" --checkpoint best --safetensors "$tmp/best.st" >/dev/null \
  && "$cli" export --project "$P" --run "$lid" --checkpoint last --safetensors "$tmp/last4.st" >/dev/null \
  && cmp -s "$tmp/best.st" "$tmp/last4.st" && ! "$cli" export --project "$P" --run "$lid" --checkpoint 2 --safetensors "$tmp/x.st" 2>/dev/null \
  && ok "--checkpoint-metric train_loss picks the lowest loss; --keep-checkpoints 1 prunes the rest" || not_ok "checkpoint policy"
out=$("$cli" train --project "$P" --network mlp --checkpoint-metric wobble 2>&1); [ $? -eq 2 ] && grep -q "unknown checkpoint metric" <<<"$out" \
  && ok "an unknown checkpoint metric is a usage error" || not_ok "bad checkpoint metric" "$out"

# lr 1e-9 cannot improve the loss by 0.5: patience 1 stops after the second epoch
out=$("$cli" train --project "$P" --dataset "$D" --threads 2 --network mlp --epochs 5 --lr 1e-9 --min-delta 0.5 --name early \
      --early-stop train_loss --patience 1 2>&1); s=$?
eid=$("$cli" runs --project "$P" --json | python3 -c 'import json,sys; print([r["epochs_done"] for r in map(json.loads, sys.stdin) if r["name"] == "early"][0])' 2>/dev/null)
[ $s -eq 0 ] && grep -q "early stopping at epoch 2" <<<"$out" && [ "$eid" = "2" ] \
  && ok "--early-stop train_loss --patience 1 --min-delta 0.5 ends a run that cannot improve after 2 of 5 epochs" || not_ok "early stopping" "$out (epochs_done $eid)"
out=$("$cli" train --dataset "$D" --network mlp --early-stop train_loss 2>&1); [ $? -eq 2 ] && grep -q "needs --project" <<<"$out" \
  && ok "--early-stop without --project is a usage error" || not_ok "early stop without project" "$out"

# a network too large for memory: one message naming the tensor and the
# bytes, the run marked failed, the project still consistent
cat >"$tmp/huge.json" <<'EOF'
{"format":"netloom.network","version":1,"name":"huge","nodes":[{"id":"data","op":"Input"},{"id":"fc1","op":"Dense","params":{"units":1000000000000}},{"id":"fc2","op":"Dense","params":{"units":10}}],"edges":["data:0 -> fc1:0","fc1:0 -> fc2:0"]}
EOF
# (an ASan build must let the allocation fail rather than abort)
out=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1 train --network "$tmp/huge.json" \
      --epochs 1 --name huge 2>&1); s=$?
st=$("$cli" runs --project "$P" --json | python3 -c 'import json,sys; print([r["status"] for r in map(json.loads, sys.stdin) if r["name"] == "huge"][0])' 2>/dev/null)
[ $s -eq 1 ] && grep -q "out of memory: fc1.weight (Dense) asked for 3,136,000,000,000,000 bytes" <<<"$out" \
  && [ "$st" = failed ] && "$cli" project info "$P" | grep -q "integrity ok" \
  && ok "out of memory names the tensor and the bytes, the run is failed, the project intact" || not_ok "out of memory" "$out (status $st)"

printf 'not a database at all' >"$tmp/foreign.netloom"; before=$(sha256sum "$tmp/foreign.netloom")
out=$("$cli" runs --project "$tmp/foreign.netloom" 2>&1); s=$?
[ $s -eq 1 ] && grep -q "not a netloom project" <<<"$out" && [ "$before" = "$(sha256sum "$tmp/foreign.netloom")" ] \
  && ok "a foreign file is refused and left untouched" || not_ok "foreign file" "$out"

echo "1..$n"
[ $failed -eq 0 ]
