#!/usr/bin/env bash
# test-sweep-cli.sh — sweeps through netloom-cli: bad input refused before
# anything is stored, a sweep's lines and JSON, its trials in runs --json
# and sweeps --json, a grid's size, --parallel, and a sweep killed with
# kill -9 during a trial (and again before a trial's first epoch) that
# resumes and ends with exactly its trials, nothing duplicated or lost.
# Usage: test-sweep-cli.sh PATH/TO/netloom-cli   (TAP)
set -u
cli="$1"
tmp=$(mktemp -d)
. "$(dirname "$0")/cli-lib.sh"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

make_mnist "$tmp/data" 1024 256
P="$tmp/p.netloom"
D="mnist:$tmp/data"
"$cli" project new --sample "$P" >/dev/null
sweep() { "$cli" sweep --project "$P" --dataset "$D" --threads 2 "$@"; }
n_sweeps() { "$cli" sweeps --project "$P" --json | wc -l; }
n_runs() { "$cli" runs --project "$P" --json | wc -l; }

# bad input: one message naming the key, exit 2, nothing stored
for case in "lr=log:1e-4:1e-1,learning_rate=0.1|learning_rate: unknown setting" \
            "lr=log:0:1e-1|lr: a log range needs LO > 0" \
            "momentum=uniform:0.5:2|momentum: momentum must be in [0, 1), not 2" \
            "fc9.units=int:64:512|fc9.units: the network mlp has no node 'fc9'" \
            "fc1.rate=0.5|fc1.rate: node fc1 (Dense) has no parameter 'rate'"; do
  space=${case%%|*} want=${case#*|}
  out=$(sweep --network mlp --space "$space" --trials 2 2>&1); s=$?
  [ $s -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -qF -- "--space: $want" <<<"$out" \
    && [ "$(n_sweeps)" -eq 0 ] && [ "$(n_runs)" -eq 0 ] \
    && ok "bad space '$space': one message naming the key, nothing stored" || not_ok "bad space '$space'" "$s: $out"
done
out=$(sweep --network mlp --space lr=0.1 --trials 2 --prune hyperband 2>&1); s=$?
[ $s -eq 2 ] && grep -q "prune must be asha" <<<"$out" && [ "$(n_sweeps)" -eq 0 ] \
  && ok "bad --prune refused before anything is stored" || not_ok "bad --prune" "$out"
out=$(sweep --network mlp --space lr=0.1 2>&1); s=$?
[ $s -eq 2 ] && grep -q -- "--trials N is required" <<<"$out" && ok "random needs --trials" || not_ok "--trials required" "$out"

# a grid runs its whole size; lines per trial, the best at the end
out=$(sweep --network mlp --epochs 1 --space 'optimizer=sgd|adam,fc1.units=int:16:32:2' --strategy grid 2>&1); s=$?
[ $s -eq 0 ] && [ "$(grep -c '^\[[0-9]/4\] trial' <<<"$out")" -eq 4 ] && grep -q "^best: trial" <<<"$out" \
  && grep -q "optimizer=adam fc1.units=32" <<<"$out" && ok "grid of 2 x 2 runs 4 trials, prints each and the best" \
  || not_ok "grid" "$out"

# the train options' checkpoint policy and early stopping hold for every trial
out=$(sweep --network mlp --epochs 4 --space 'lr=0.05|0.1' --strategy grid --early-stop train_loss --patience 1 \
  --min-delta 100 --json 2>&1); s=$?
[ $s -eq 0 ] && python3 -c '
import json, sys
trials = [json.loads(l) for l in sys.argv[1].splitlines()][:-1]
assert len(trials) == 2 and all(t["status"] == "finished" and t["epochs"] == 2 for t in trials), trials
' "$out" && ok "--early-stop and --patience apply to each trial" || not_ok "sweep early stopping" "$out"

# --json, --parallel 2, ASHA: the trials are runs linked to their sweep
out=$(sweep --network mlp --epochs 3 --space 'lr=log:1e-3:3e-1,fc1.units=int:8:64' --trials 5 --seed 3 \
  --prune asha:eta=2,min_epochs=1 --parallel 2 --json 2>&1); s=$?
[ $s -eq 0 ] && python3 - "$out" "$("$cli" runs --project "$P" --json)" "$("$cli" sweeps --project "$P" --json)" <<'PY' \
  && ok "sweep --json --parallel 2 --prune asha: trial lines, runs --json and sweeps --json agree" || not_ok "json sweep" "$out"
import json, sys
lines = [json.loads(l) for l in sys.argv[1].splitlines()]
runs = [json.loads(l) for l in sys.argv[2].splitlines()]
sweeps = [json.loads(l) for l in sys.argv[3].splitlines()]
trials, end = lines[:-1], lines[-1]
assert len(trials) == 5 and sorted(t["trial"] for t in trials) == list(range(5)), trials
assert end["sweep"] == 3 and end["status"] == "finished" and end["trials"] == 5, end
assert end["epochs"] == sum(t["epochs"] for t in trials), end
assert any(t["status"] == "pruned" for t in trials), trials   # eta 2: some trial is below the median
for t in trials:
    assert t["status"] in ("finished", "pruned") and set(t["params"]) == {"lr", "fc1.units"}, t
    assert t["epochs"] == (3 if t["status"] == "finished" else t["epochs"]) and t["epochs"] >= 1, t
best = max((t for t in trials if t["value"] is not None), key=lambda t: t["value"])
assert end["best"]["value"] == best["value"], end
mine = {r["id"]: r for r in runs if r["sweep"] == 3}
assert sorted(r["trial"] for r in mine.values()) == list(range(5)), mine
assert all(r["sweep"] is None and r["trial"] is None for r in runs if r["id"] not in mine and r["sweep"] not in (1, 2))
assert {t["run"] for t in trials} == set(mine), (trials, mine)
s = [x for x in sweeps if x["id"] == 3][0]
assert s["trials"] == 5 and s["trials_done"] == 5 and s["prune"] == "asha:eta=2,min_epochs=1" and s["parallel"] == 2, s
PY

# kill -9 during a trial, resume, kill -9 again before a trial's first
# epoch, resume: exactly the trials asked for, each once. The moments are
# steps (NETLOOM_TEST_STOP_AT_STEP, cli-lib.sh): every trial's trainer stops
# itself at step 34 (32 an epoch), the test continues it until a trial after
# the first is the one stopped, and kills the sweep there.
N=4
make_mnist "$tmp/kdata" 1024 256
NETLOOM_TEST_STOP_AT_STEP=34 "$cli" sweep --project "$P" --dataset "mnist:$tmp/kdata" --threads 2 --network lenet \
  --epochs 2 --batch-size 32 --space 'lr=log:1e-3:1e-1,momentum=uniform:0.5:0.95' --trials $N --prune asha --json \
  >"$tmp/killed.json" 2>&1 &
victim=$!   # the CLI itself, not a subshell
while wait_stopped $victim; do
  "$cli" runs --project "$P" --json 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if any(r["sweep"] == 4 and r["trial"] >= 1 and r["status"] == "running" and r["epochs_done"] >= 1
                  for r in map(json.loads, sys.stdin)) else 1)' && break
  kill -CONT $victim
done
kill -9 $victim; wait $victim 2>/dev/null
before=$("$cli" runs --project "$P" --json | python3 -c '
import json, sys
print(" ".join(r["status"] for r in map(json.loads, sys.stdin) if r["sweep"] == 4))')
# the resumed sweep finishes the interrupted trial (from its checkpoint), and the next trial's
# trainer stops itself before its first step
NETLOOM_TEST_STOP_AT_STEP=0 "$cli" sweep --project "$P" --resume 4 --json >"$tmp/resumed1.json" 2>&1 &
victim=$!
wait_stopped $victim
kill -9 $victim; wait $victim 2>/dev/null
# the trial just created has no checkpoint yet: it is trained again from its start
again=$("$cli" runs --project "$P" --json | python3 -c '
import json, sys
print(" ".join("%s:%d" % (r["status"], r["epochs_done"]) for r in map(json.loads, sys.stdin) if r["sweep"] == 4))')
rout=$("$cli" sweep --project "$P" --resume 4 --json 2>&1); s=$?
info=$("$cli" project info "$P" 2>&1)
[ $s -eq 0 ] && grep -q "interrupted" <<<"$before" && grep -Eq "(queued|interrupted):0" <<<"$again" && grep -q "integrity ok" <<<"$info" \
  && python3 - "$P" "$N" "$("$cli" sweeps --project "$P" --json)" "$rout" <<'PY' \
  && ok "kill -9 twice: the sweep resumes to exactly $N trials, none duplicated or lost" \
  || not_ok "kill -9 sweep" "$(printf '%s\n' "before: $before" "again: $again" "$rout" "$(cat "$tmp/killed.json" "$tmp/resumed1.json")")"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = int(sys.argv[2])
rows = db.execute("SELECT id, sweep_trial, status, epochs_done FROM runs WHERE sweep = 4").fetchall()
assert sorted(r[1] for r in rows) == list(range(n)), rows
assert all(r[2] in ("finished", "pruned") for r in rows), rows
assert all(r[3] == 2 for r in rows if r[2] == "finished"), rows
# one test accuracy per epoch trained, none twice
for run, trial, status, epochs in rows:
    points = db.execute("SELECT epoch FROM metrics WHERE run = ? AND name = 'accuracy' AND split = 'test'"
                        " ORDER BY epoch", (run,)).fetchall()
    assert [p[0] for p in points] == list(range(1, epochs + 1)), (run, points)
s = [x for x in map(json.loads, sys.argv[3].splitlines()) if x["id"] == 4][0]
assert s["status"] == "finished" and s["trials_done"] == n and s["runs"] == n, s
end = json.loads(sys.argv[4].splitlines()[-1])
assert end["status"] == "finished" and end["trials"] == n, end
PY
out=$("$cli" sweep --project "$P" --resume 4 2>&1); s=$?
[ $s -eq 0 ] && grep -q "sweep 4 finished: $N trials" <<<"$out" && [ "$(grep -c '^\[' <<<"$out")" -eq 0 ] \
  && ok "resuming a finished sweep runs nothing" || not_ok "resume finished" "$out"
out=$("$cli" sweep --project "$P" --resume 4 --space lr=0.1 2>&1); s=$?
[ $s -eq 2 ] && grep -q "resume continues a sweep as it was stored" <<<"$out" \
  && ok "--resume refuses a new space" || not_ok "--resume with --space" "$out"

echo "1..$n"
[ $failed -eq 0 ]
