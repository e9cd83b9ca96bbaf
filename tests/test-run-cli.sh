#!/usr/bin/env bash
# test-run-cli.sh — how far resume may go (never to or before where the
# run stands: one message, the project left as it was), shapes too large to
# count refused naming the node, and fork --dataset: a run's weights
# fine-tuned on another dataset, or one message saying why they do not fit.
# Usage: test-run-cli.sh PATH/TO/netloom-cli   (TAP)
set -u
cli="$1"
src="${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}"
tmp=$(mktemp -d)
. "$(dirname "$0")/cli-lib.sh"
trap 'rm -rf "$tmp"' EXIT

make_mnist "$tmp/a" 1024 128
make_mnist "$tmp/b" 512 128
P="$tmp/p.netloom"
common=(--threads 2 --workers 0 --batch-size 64 --seed 3 --lr 0.02 --json)
"$cli" project new "$P" >/dev/null
# the parent: mlp on dataset a, 3 epochs (run 1)
out=$("$cli" train --project "$P" --network "$src/data/networks/mlp.json" --dataset "mnist:$tmp/a" --epochs 3 \
      "${common[@]}" 2>&1) && ok "the parent run" || not_ok "the parent run" "$out"

# state of the project as the CLI shows it, and the file itself
state() { "$cli" runs --project "$P" --json; "$cli" metrics --project "$P" --run 1 --csv | wc -l; sha256sum "$P"; }

# ---- resume --epochs at or below what a finished run has done ----
before=$(state)
for e in 3 2; do
  err=$("$cli" resume --project "$P" --run 1 --epochs $e 2>&1 >/dev/null); s=$?
  [ $s -ne 0 ] && [ "$err" = "netloom-cli: run 1 finished after 3 epochs; --epochs must be at least 4 to train on" ] \
    && [ "$before" = "$(state)" ] \
    && ok "resume --epochs $e of a run that finished 3 epochs: refused, the project unchanged" \
    || not_ok "resume --epochs $e (exit $s)" "$err"
done

# ---- a shape whose element count overflows: refused naming the node ----
cat >"$tmp/huge-input.json" <<'EOF'
{"format":"netloom.network","version":1,"name":"huge-input","nodes":[{"id":"in","op":"Input","params":{"shape":[4294967296,4294967296,4294967296]}},{"id":"flatten","op":"Flatten"},{"id":"fc","op":"Dense","params":{"units":10}}],"edges":["in:0 -> flatten:0","flatten:0 -> fc:0"]}
EOF
want="node 'in': Input parameter 'shape' [4294967296, 4294967296, 4294967296] has too many elements"
for cmd in plan train; do
  extra=(); [ $cmd = train ] && extra=(--dataset "mnist:$tmp/b" --epochs 1)
  err=$("$cli" $cmd --network "$tmp/huge-input.json" "${extra[@]}" 2>&1 >/dev/null); s=$?
  [ $s -eq 1 ] && grep -qF "$want" <<<"$err" && [ "$(wc -l <<<"$err")" = 1 ] \
    && ok "$cmd: an Input shape of 2^96 elements is one message naming the node" || not_ok "$cmd huge shape (exit $s)" "$err"
done

# ---- fork --dataset: the parent's weights fine-tuned on dataset b ----
out=$("$cli" fork --project "$P" --run 1 --dataset "mnist:$tmp/b" --epochs 2 --name tuned --json 2>&1 >"$tmp/tuned.json"); s=$?
fresh=$("$cli" train --project "$P" --network "$src/data/networks/mlp.json" --dataset "mnist:$tmp/b" --epochs 1 \
        --name fresh "${common[@]}" 2>&1)
tuned_loss=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["train_loss"])' "$tmp/tuned.json")
fresh_loss=$(python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["train_loss"])' <<<"$fresh")
parent_last=$("$cli" metrics --project "$P" --run 1 --name loss --csv | tail -1 | cut -d, -f5)
"$cli" runs --project "$P" --json | python3 -c '
import json, sys
child = [r for r in map(json.loads, sys.stdin) if r["name"] == "tuned"][0]
assert child["parent_run"] == 1 and child["status"] == "finished" and child["epochs_done"] == 2, child
' && [ $s -eq 0 ] && [ "$(grep -c '^{' "$tmp/tuned.json")" = 2 ] \
  && python3 -c 'import sys; t, f = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if t < f / 2 else 1)' \
       "$tuned_loss" "$fresh_loss" \
  && python3 - "$P" "$tmp/b" <<'PY' \
  && ok "fork --dataset trains the parent's weights on another dataset, epochs 1-2 (first loss $tuned_loss, fresh $fresh_loss, parent's last $parent_last)" \
  || not_ok "fork --dataset (exit $s, first loss $tuned_loss, fresh $fresh_loss)" "$out $(cat "$tmp/tuned.json")"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
hp, = db.execute("select hparams_json from runs where name = 'tuned'").fetchone()
hp = json.loads(hp)
# the dataset is b's, the normalisation the weights were trained with
assert hp["dataset"] == "mnist:" + sys.argv[2], hp
assert abs(hp["mean"] - 0.13) < 1e-6 and abs(hp["std"] - 0.31) < 1e-6, hp
PY

# a dataset whose samples do not fit the weights: 5 features, not 784
python3 - "$tmp/five.csv" "$tmp/classes.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(40):
        f.write(",".join(str((i * 7 + k) % 5) for k in range(5)) + ",%d\n" % (i % 3))
# 784 features (an mlp's input) but 12 classes: the mlp scores 10
with open(sys.argv[2], "w") as f:
    for i in range(48):
        f.write(",".join("0.5" if k // 28 == i % 12 else "0" for k in range(784)) + ",%d\n" % (i % 12))
PY
n_runs=$("$cli" runs --project "$P" --json | wc -l)
err=$("$cli" fork --project "$P" --run 1 --dataset "csv:$tmp/five.csv" --epochs 1 2>&1 >/dev/null); s=$?
[ $s -eq 1 ] && grep -qF "dataset “csv:$tmp/five.csv” does not fit run 1's network: " <<<"$err" \
  && grep -qF "fc1.weight" <<<"$err" && grep -qF "(256, 784)" <<<"$err" && [ "$(wc -l <<<"$err")" = 1 ] \
  && [ "$n_runs" = "$("$cli" runs --project "$P" --json | wc -l)" ] \
  && ok "fork --dataset of samples the weights do not take: one message naming the dataset, the run and the tensor" \
  || not_ok "fork --dataset shape mismatch (exit $s)" "$err"
err=$("$cli" fork --project "$P" --run 1 --dataset "csv:$tmp/classes.csv" --epochs 1 2>&1 >"$tmp/fork.out"); s=$?
[ $s -eq 1 ] && [ "$err" = "netloom-cli: dataset “csv:$tmp/classes.csv” does not fit run 1's network: it has 12 classes, the network scores 10" ] \
  && [ "$n_runs" = "$("$cli" runs --project "$P" --json | wc -l)" ] && ! grep -q "^run " "$tmp/fork.out" \
  && ok "fork --dataset of more classes than the network scores: one message" || not_ok "fork --dataset classes (exit $s)" "$err"
err=$("$cli" resume --project "$P" --run 1 --dataset "mnist:$tmp/b" 2>&1 >/dev/null); s=$?
[ $s -eq 2 ] && grep -qF "to change its settings, fork it" <<<"$err" \
  && ok "resume --dataset is a usage error" || not_ok "resume --dataset (exit $s)" "$err"
err=$("$cli" fork --project "$P" --run 1 --dataset "mnist:$tmp/b" --val-fraction 2 2>&1 >/dev/null); s=$?
[ $s -eq 2 ] && grep -qF -- "--val-fraction" <<<"$err" \
  && ok "fork checks the dataset options as train does" || not_ok "fork --val-fraction 2 (exit $s)" "$err"
out=$("$cli" fork --help 2>&1)
grep -qF -- "--dataset=SPEC" <<<"$out" && grep -qF -- "--label-column" <<<"$out" && grep -qF "fresh optimizer" <<<"$out" \
  && ok "fork --help lists the dataset options" || not_ok "fork --help" "$out"

echo "1..$n"
[ $failed -eq 0 ]
