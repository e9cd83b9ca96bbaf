#!/usr/bin/env bash
# test-layers-cli.sh — layer statistics from the command line: the mlp
# trained with --layer-stats-every 4 on a small MNIST-format set stores
# them at steps 4 and 8 (metrics and histograms, the setting in the run's
# settings); `layers` prints the latest step's and --step's table, as CSV
# and JSON, equal to the stored metrics; a step without statistics and a
# run without any fail with one message; a run whose node makes a NaN (or
# Inf) fails with the message naming the node, forward or backward, and
# the step, stored as the run's error with the metric
# layer/<node>/first_nonfinite, which `layers` shows; a resume keeps the
# histograms before its checkpoint and adds its own; a fork takes its own
# interval (resume refuses one); deleting the run deletes its histograms.
# Usage: test-layers-cli.sh PATH/TO/netloom-cli (TAP)
set -u
cli="$1"
tmp=$(mktemp -d)
. "$(dirname "$0")/cli-lib.sh"
trap 'rm -rf "$tmp"' EXIT

make_mnist "$tmp/data" 512 100
D="mnist:$tmp/data"
P="$tmp/p.netloom"
train() { "$cli" train --project "$P" --network mlp --dataset "$D" --epochs 1 --batch-size 64 --threads 2 "$@"; }

out=$("$cli" project new --sample "$P" 2>&1) || not_ok "project new" "$out"
out=$(train --layer-stats-every 4 2>&1) || not_ok "train with --layer-stats-every 4" "$out"
[ "$(sql "$P" "SELECT json_extract (hparams_json, '$.layer_stats_every') FROM runs WHERE id = 1")" = 4 ] \
  && ok "the interval is stored with the run's settings" || not_ok "interval stored"
steps=$(sql "$P" "SELECT group_concat (step) FROM (SELECT DISTINCT step FROM metrics WHERE run = 1
                  AND name = 'layer/fc1.weight/grad_norm' ORDER BY step)")
[ "$steps" = "4,8" ] && ok "statistics at steps 4 and 8 of 8" || not_ok "statistics steps" "$steps"
# 4 weight tensors (fc1, fc2: weight, bias), weights and gradients, 2 steps
hn=$(sql "$P" "SELECT count (*) FROM layer_histograms WHERE run = 1")
[ "$hn" = 16 ] && ok "16 histograms stored" || not_ok "histograms" "$hn"
if check=$(python3 - "$P" 2>&1 <<'PY'
import sqlite3, struct, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT tensor, is_grad, lo, hi, counts FROM layer_histograms WHERE run = 1 AND step = 8").fetchall()
assert len(rows) == 8, rows
n = {"fc1.weight": 784 * 256, "fc1.bias": 256, "fc2.weight": 256 * 10, "fc2.bias": 10}
for tensor, is_grad, lo, hi, blob in rows:
    counts = struct.unpack("<32I", blob)
    assert sum(counts) == n[tensor], (tensor, sum(counts))
    assert lo <= hi and counts[31] >= 1, (tensor, lo, hi, counts)
print("32 bins each, summing to the tensor's size")
PY
); then ok "histograms: $check"; else not_ok "histograms' counts" "$check"; fi

# ---- layers: the table against the stored metrics ----
# compare FORMAT STEP TEXT: the rows of TEXT (csv or json) are the stored metrics of STEP
compare() {
  python3 - "$P" "$@" <<'PY'
import csv, io, json, sqlite3, sys
path, fmt, step, text = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
db = sqlite3.connect(path)
want = {}
for name, value in db.execute("SELECT name, value FROM metrics WHERE run = 1 AND step = ? AND name LIKE 'layer/%'",
                              (step,)):
    what, stat = name[6:].rsplit("/", 1)
    want.setdefault(what, {})[stat] = value
if fmt == "json":
    j = json.loads(text)
    assert j["run"] == 1 and j["step"] == step, j
    got = {r.pop("layer"): r for r in j["layers"]}
else:
    got = {r.pop("layer"): {k: float(v) for k, v in r.items() if v} for r in csv.DictReader(io.StringIO(text))}
assert set(got) == set(want), (sorted(got), sorted(want))
for what, stats in want.items():
    assert set(got[what]) == set(stats), (what, got[what], stats)
    for k, v in stats.items():
        assert abs(got[what][k] - v) <= 1e-8 * max(1, abs(v)), (what, k, got[what][k], v)
assert "relu1" in got and 0 < got["relu1"]["dead_fraction"] < 1, got.get("relu1")
assert got["fc1.weight"]["grad_norm"] > 0 and got["fc1.weight"]["update_ratio"] > 0, got["fc1.weight"]
print(len(got), "rows")
PY
}
if out=$("$cli" layers --project "$P" --run 1 --csv 2>&1) && check=$(compare csv 8 "$out" 2>&1); then
  ok "layers --csv: the latest step's $check, as stored"
else
  not_ok "layers --csv" "$out $check"
fi
if out=$("$cli" layers --project "$P" --run 1 --step 4 --json 2>&1) && check=$(compare json 4 "$out" 2>&1); then
  ok "layers --step 4 --json: $check, as stored"
else
  not_ok "layers --step 4 --json" "$out $check"
fi
out=$("$cli" layers --project "$P" --run 1 2>&1) && head -1 <<<"$out" | grep -qx "run 1, step 8" \
  && grep -q "^relu1 " <<<"$out" && ok "layers prints the table" || not_ok "layers table" "$out"

bad() {
  local what="$1" expect="$2"; shift 2
  out=$("$cli" layers --project "$P" "$@" 2>&1); s=$?
  [ $s -ne 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -qF "$expect" <<<"$out" && ok "layers $what: one message" \
    || not_ok "layers $what" "$out"
}
bad "at a step without statistics" "run 1 has no layer statistics at step 5 (they are at steps 4 to 8)" --run 1 --step 5
bad "of a run that does not exist" "no run 9" --run 9
out=$(train --layer-stats-every 0 2>&1) || not_ok "train with --layer-stats-every 0" "$out"
bad "of a run trained without" "run 2 has no layer statistics" --run 2
[ "$(sql "$P" "SELECT count (*) FROM layer_histograms WHERE run = 2")" = 0 ] \
  && ok "--layer-stats-every 0 records nothing" || not_ok "0 is off"

# ---- the first NaN / Inf, named ----
nonfinite() {
  local inject="$1" run="$2" expect="$3" node="$4" where="$5" step="$6"
  out=$(NETLOOM_TEST_NONFINITE=$inject train --layer-stats-every 1 2>&1); s=$?
  msg=$(sql "$P" "SELECT error FROM runs WHERE id = $run")
  metric=$(sql "$P" "SELECT step || ' ' || value FROM metrics WHERE run = $run AND name = 'layer/$node/first_nonfinite'")
  shown=$("$cli" layers --project "$P" --run $run --csv | awk -F, -v n="$node" '$1 == n { print $8 }')
  if [ $s -ne 0 ] && grep -qxF "netloom-cli: $expect" <<<"$out" && [ "$msg" = "$expect" ] \
     && [ "$metric" = "$step $where.0" ] && [ "$shown" = "$([ $where = 1 ] && echo forward || echo backward)" ]; then
    ok "$expect: the message, the run's error, the metric, layers"
  else
    not_ok "$inject" "$out / $msg / $metric / $shown"
  fi
}
nonfinite fc1:backward:nan:3 3 "node 'fc1' made the first NaN in backward at step 3" fc1 2 3
nonfinite relu1:forward:inf:2 4 "node 'relu1' made the first Inf in forward at step 2" relu1 1 2

# ---- kept by resume: a second epoch adds steps 12 and 16 to those of the first ----
out=$("$cli" resume --project "$P" --run 1 --epochs 2 2>&1) || not_ok "resume" "$out"
steps=$(sql "$P" "SELECT group_concat (step) FROM (SELECT DISTINCT step FROM layer_histograms WHERE run = 1 ORDER BY step)")
[ "$steps" = "4,8,12,16" ] && ok "resume keeps the first epoch's histograms and adds its own" \
  || not_ok "histograms after resume" "$steps"

# ---- a fork takes its own interval; its steps go on from its parent's ----
out=$("$cli" fork --project "$P" --run 1 --epochs 3 --layer-stats-every 2 2>&1) || not_ok "fork" "$out"
steps=$(sql "$P" "SELECT group_concat (step) FROM (SELECT DISTINCT step FROM layer_histograms WHERE run = 5 ORDER BY step)")
[ "$steps" = "18,20,22,24" ] && [ "$(sql "$P" "SELECT json_extract (hparams_json, '$.layer_stats_every') FROM runs
  WHERE id = 5")" = 2 ] && ok "fork --layer-stats-every 2: stored, statistics at steps 18 to 24" \
  || not_ok "fork's statistics" "$steps"
out=$("$cli" resume --project "$P" --run 1 --layer-stats-every 3 2>&1); s=$?
[ $s -eq 2 ] && grep -q "to change its settings, fork it" <<<"$out" && ok "resume refuses --layer-stats-every" \
  || not_ok "resume --layer-stats-every" "$out"

# ---- deleted with the run ----
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA foreign_keys = ON")
c.execute("DELETE FROM runs WHERE id = 1"); c.commit()' "$P"
[ "$(sql "$P" "SELECT count (*) FROM layer_histograms WHERE run = 1")" = 0 ] \
  && ok "deleting the run deletes its histograms" || not_ok "cascade"

echo "1..$n"
exit $((failed > 0))
