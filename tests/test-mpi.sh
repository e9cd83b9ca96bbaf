#!/usr/bin/env bash
# test-mpi.sh — data-parallel training under a real `mpirun -np 2`: the
# same weights and accuracy as one process for the same seed and global
# batch (also where 2 does not divide the batch), resume and fork with
# another process count, a rank killed with kill -9 mid-epoch (the other
# exits within 30 s, the project stays intact and the run resumes), and a
# rank given another network refused; a sweep whose trials each train on
# every rank (and --resume of it); all ranks killed inside an epoch and
# resumed from the checkpoint by time, bit for bit. Skips (with the reason) only where
# mpirun is absent or netloom was built without MPI.
# Usage: test-mpi.sh PATH/TO/netloom-cli   (TAP)
set -u
cli="$1"
src="${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}"
tmp=$(mktemp -d)
. "$(dirname "$0")/cli-lib.sh"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

if ! command -v mpirun >/dev/null; then
  echo "1..0 # SKIP mpirun is not installed (Debian: openmpi-bin)"
  exit 0
fi
# Open MPI refuses root without these; oversubscribe: 2 ranks on any machine
# Under AddressSanitizer, leak detection is off in the ranks (errors are
# still caught): Open MPI keeps its plugins' memory until exit and unloads
# them, so those reports have no names to suppress; the same netloom code
# runs with leak detection in this script's single-process runs.
ranks_env=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
mpi=("${ranks_env[@]}" mpirun --oversubscribe -np 2)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_rmaps_base_oversubscribe=1

make_mnist "$tmp/data" 1300 500   # 10 full batches of 128 and a short one of 20
P="$tmp/p.netloom"
D="mnist:$tmp/data"
"$cli" project new "$P" >/dev/null
lenet="$src/data/networks/lenet.json"
common=(--project "$P" --dataset "$D" --network "$lenet" --epochs 1 --seed 1 --json)

probe=$("${mpi[@]}" "$cli" train "${common[@]}" --batch-size 128 --threads 1 2>&1)
if grep -q "built without MPI" <<<"$probe"; then
  echo "1..0 # SKIP this netloom was built without MPI"
  exit 0
fi

# relative L2 distance of two runs' exported weights
distance() {
  "$cli" export --project "$P" --run "$1" --safetensors "$tmp/w$1.st" >/dev/null \
    && "$cli" export --project "$P" --run "$2" --safetensors "$tmp/w$2.st" >/dev/null \
    && python3 - "$tmp/w$1.st" "$tmp/w$2.st" <<'PY'
import json, math, struct, sys
def load(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    head = json.loads(b[8:8 + n])
    return {k: struct.unpack("<%df" % ((v["data_offsets"][1] - v["data_offsets"][0]) // 4),
                             b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]])
            for k, v in head.items() if k != "__metadata__"}
a, b = load(sys.argv[1]), load(sys.argv[2])
assert a.keys() == b.keys()
num = sum((x - y) ** 2 for k in a for x, y in zip(a[k], b[k]))
den = sum(x * x for k in a for x in a[k])
print("%.3g" % math.sqrt(num / den))
PY
}
test_acc() { python3 -c 'import json, sys; print(json.loads(sys.argv[1].strip().splitlines()[-1])["test_acc"])' "$1"; }
agree() {  # RUN_A RUN_B OUT_A OUT_B WHAT
  local d da
  d=$(distance "$1" "$2") && da=$(python3 -c 'import sys; print(abs(float(sys.argv[1]) - float(sys.argv[2])) * 100)' \
    "$(test_acc "$3")" "$(test_acc "$4")") \
    && python3 -c 'import sys; sys.exit(not (float(sys.argv[1]) <= 1e-4 and float(sys.argv[2]) <= 0.3))' "$d" "$da" \
    && ok "$5: weights within $d relative L2, test accuracy within $da points" \
    || not_ok "$5" "distance $d, accuracy difference $da points; $3 $4"
}

# run 1: the two ranks (above); run 2: one process
single=$("$cli" train "${common[@]}" --batch-size 128 --threads 2 2>&1)
agree 1 2 "$probe" "$single" "np 2 = 1 process (lenet, 1 epoch, global batch 128)"
python3 -c '
import json, sys
r = [json.loads(l) for l in sys.argv[1].splitlines() if l.startswith("{")][-1]
assert r["processes"] == 2 and r["images_per_s"] > 0, r
' "$probe" && [ "$(grep -c '^{' <<<"$probe")" = 1 ] && ok "rank 0 alone prints, one line per epoch with the processes" \
  || not_ok "rank 0's output" "$probe"
"$cli" runs --project "$P" --json | python3 -c '
import json, sys
runs = [json.loads(l) for l in sys.stdin if l.strip()]
assert runs[0]["processes"] == 2 and runs[0]["hosts"].endswith(" x2"), runs[0]
assert "processes" not in runs[1], runs[1]
' && ok "the run records its 2 processes and their host" || not_ok "run row processes" "$("$cli" runs --project "$P" --json)"

# 2 does not divide 127: ranks take 64 and 63, the gradient is still the global batch's mean
odd2=$("${mpi[@]}" "$cli" train "${common[@]}" --batch-size 127 --threads 1 2>&1)
odd1=$("$cli" train "${common[@]}" --batch-size 127 --threads 2 2>&1)
agree 3 4 "$odd2" "$odd1" "np 2 = 1 process with global batch 127"

# fp16 with dynamic loss scaling from 2^24 (the first steps overflow and
# are skipped: by every rank alike) and global-norm clipping: the ranks
# judge and clip the same summed gradients
mlp=(--project "$P" --dataset "$D" --network "$src/data/networks/mlp.json" --epochs 1 --seed 1 --json --batch-size 128
     --precision fp16 --loss-scale 16777216 --clip-norm 0.5)
fp2=$("${mpi[@]}" "$cli" train "${mlp[@]}" --threads 1 2>&1)
fp1=$("$cli" train "${mlp[@]}" --threads 2 2>&1)
agree 5 6 "$fp2" "$fp1" "np 2 = 1 process, fp16 with skipped overflowing steps and global-norm clipping (mlp)"

# resume the 2-process run with 1 process, and the 1-process run with 2
out=$("$cli" resume --project "$P" --run 1 --epochs 2 --json 2>&1) && out2=$("${mpi[@]}" "$cli" resume --project "$P" --run 2 --epochs 2 --json 2>&1) \
  && [ "$(grep -c '"epoch":2' <<<"$out")" = 1 ] && [ "$(grep -c '"epoch":2' <<<"$out2")" = 1 ] \
  && "$cli" runs --project "$P" | grep -E '^ +1 +finished .*epochs 2/2' >/dev/null \
  && "$cli" runs --project "$P" | grep -E '^ +2 +finished .*epochs 2/2' >/dev/null \
  && agree 1 2 "$out" "$out2" "resumed with 1 and with 2 processes: still the same training" \
  || not_ok "resume with another process count" "$out $out2"
out=$("${mpi[@]}" "$cli" fork --project "$P" --run 2 --epochs 3 --json 2>&1) \
  && "$cli" runs --project "$P" | grep -E '^ +7 +finished .*epochs 3/3' >/dev/null \
  && ok "fork of a 1-process run under mpirun -np 2" || not_ok "fork under mpirun" "$out"

# a rank given another network: every rank stops, one message from rank 0
out=$(timeout 60 "${ranks_env[@]}" mpirun --oversubscribe $([ "$(id -u)" = 0 ] && echo --allow-run-as-root) \
  -np 1 "$cli" train "${common[@]}" --batch-size 128 : -np 1 "$cli" train --project "$P" --dataset "$D" \
  --network "$src/data/networks/mlp.json" --epochs 1 --seed 1 --json --batch-size 128 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c 'rank 1 of 2 runs another network' <<<"$out")" = 1 ] \
  && ok "a mismatched network on rank 1 is refused with one message" || not_ok "mismatch (rc $rc)" "$out"

# a sweep under mpirun: rank 0 runs it, every trial trains on both ranks;
# the same 3-trial grid in one process trains the same trials
W2="$tmp/w2.netloom" W1="$tmp/w1.netloom"
"$cli" project new "$W2" >/dev/null && "$cli" project new "$W1" >/dev/null
sw=(--dataset "$D" --network "$src/data/networks/mlp.json" --epochs 1 --seed 1 --batch-size 128
    --space 'lr=0.001|0.003|0.01' --strategy grid --json)   # accuracies from ~10% to ~99%: they tell the trials apart
out2=$(timeout 300 "${mpi[@]}" "$cli" sweep --project "$W2" "${sw[@]}" --threads 1 2>&1); s2=$?
out1=$("$cli" sweep --project "$W1" "${sw[@]}" --threads 2 2>&1); s1=$?
[ $s2 -eq 0 ] && [ $s1 -eq 0 ] && python3 - "$out2" "$("$cli" sweeps --project "$W2" --json)" \
  "$("$cli" runs --project "$W2" --json)" "$("$cli" runs --project "$W1" --json)" <<'PY' \
  && ok "sweep under mpirun -np 2: 3 finished trials of 2 processes, as in one process" \
  || not_ok "sweep under mpirun (rc $s2, $s1)" "$out2 $out1"
import json, sys
lines = [json.loads(l) for l in sys.argv[1].splitlines() if l.startswith("{")]
sweeps = [json.loads(l) for l in sys.argv[2].splitlines()]
runs2 = [json.loads(l) for l in sys.argv[3].splitlines()]
runs1 = [json.loads(l) for l in sys.argv[4].splitlines()]
assert len(lines) == 4 and lines[-1]["status"] == "finished" and lines[-1]["trials"] == 3, lines   # rank 0 alone prints
assert len(sweeps) == 1 and sweeps[0]["status"] == "finished" and sweeps[0]["trials_done"] == 3, sweeps
assert len(runs2) == 3 and len(runs1) == 3, (runs2, runs1)
for r in runs2:
    assert r["status"] == "finished" and r["sweep"] == 1 and r["processes"] == 2, r
for r in runs1:
    assert r["status"] == "finished" and "processes" not in r, r
one = {r["trial"]: r for r in runs1}
two = {r["trial"]: r for r in runs2}
assert sorted(one) == sorted(two) == [0, 1, 2], (one, two)
for k in one:   # each trial: the same training (loss) and accuracy
    assert abs(one[k]["last_test_accuracy"] - two[k]["last_test_accuracy"]) * 100 <= 0.3, (one[k], two[k])
    assert abs(one[k]["last_train_loss"] - two[k]["last_train_loss"]) <= 1e-3 * one[k]["last_train_loss"], (one[k], two[k])
best = lambda runs: max(runs.values(), key=lambda r: r["last_test_accuracy"])
assert best(one)["trial"] == best(two)["trial"] == lines[-1]["best"]["trial"], (one, two, lines[-1])
assert abs(best(one)["last_test_accuracy"] - best(two)["last_test_accuracy"]) * 100 <= 0.3, (one, two)
PY
# ASHA under mpirun: rank 0 prunes a trial (every rank ends it) and the
# next trial trains on both ranks again
A="$tmp/a.netloom"
"$cli" project new "$A" >/dev/null
out=$(timeout 300 "${mpi[@]}" "$cli" sweep --project "$A" --dataset "$D" --network "$src/data/networks/mlp.json" \
  --epochs 3 --space 'lr=log:1e-3:3e-1' --trials 5 --seed 3 --prune asha:eta=2,min_epochs=1 --threads 1 --json 2>&1) \
  && python3 - "$out" "$("$cli" runs --project "$A" --json)" <<'PY' \
  && ok "a pruned trial under mpirun: the sweep goes on, 5 trials on 2 processes" || not_ok "ASHA under mpirun" "$out"
import json, sys
lines = [json.loads(l) for l in sys.argv[1].splitlines() if l.startswith("{")]
runs = [json.loads(l) for l in sys.argv[2].splitlines()]
assert lines[-1]["status"] == "finished" and lines[-1]["trials"] == 5, lines
assert len(runs) == 5 and all(r["processes"] == 2 and r["status"] in ("finished", "pruned") for r in runs), runs
assert any(r["status"] == "pruned" for r in runs) and runs[-1]["status"] == "finished", runs
PY
# --resume under mpirun: a finished sweep has nothing left to train, and
# the other rank ends with rank 0
out=$(timeout 120 "${mpi[@]}" "$cli" sweep --project "$W2" --resume 1 --json 2>&1) \
  && [ "$(grep -c '"status":"finished","trials":3' <<<"$out")" = 1 ] && [ "$("$cli" runs --project "$W2" --json | wc -l)" = 3 ] \
  && ok "sweep --resume under mpirun: both ranks end, nothing trained again" || not_ok "sweep --resume under mpirun" "$out"
# a trial rank 0 cannot start (its checkpoint does not load on --resume):
# the other rank, waiting for rank 0's model, is released at once (not
# by the collective timeout) and the sweep stops with one message
python3 - "$A" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("update runs set status = 'interrupted', epochs_done = 1 where id = 5")
db.execute("delete from checkpoints where run = 5 and epoch > 1")
db.execute("update checkpoints set blob = x'00112233', size = 4 where run = 5")
db.execute("update sweeps set status = 'stopped'")
db.commit()
PY
out=$(timeout 50 "${mpi[@]}" -x NETLOOM_COLLECTIVE_TIMEOUT=60 "$cli" sweep --project "$A" --resume 1 2>&1); rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c 'trial 4: checkpoint [0-9]* (epoch 1) of run 5 is damaged: invalid checkpoint' <<<"$out")" = 1 ] && ! grep -q "no answer" <<<"$out" \
  && "$cli" sweeps --project "$A" | grep -q "stopped" \
  && ok "a trial rank 0 cannot start under mpirun: every rank ends at once, one message" || not_ok "unstartable trial (rc $rc)" "$out"
out=$(timeout 120 "${mpi[@]}" "$cli" sweep --project "$W2" "${sw[@]}" --parallel 2 2>&1); rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c 'parallel 2 cannot run under mpirun' <<<"$out")" = 1 ] \
  && [ "$("$cli" sweeps --project "$W2" --json | wc -l)" = 1 ] \
  && ok "sweep --parallel 2 under mpirun: refused with one message, nothing stored" || not_ok "--parallel under mpirun (rc $rc)" "$out"

# the GUI's Pause: SIGTSTP to mpirun stops every rank; stopped for longer
# than the collective timeout (10 s here: shorter, a loaded machine's
# checkpoint write can outlast it), the job goes on after SIGCONT
# (stopped time is no dead peer), and SIGTERM ends it as a stopped run
# (100000 epochs: 1000 of this small set end in 40 s on a fast machine,
# before the SIGTERM comes)
S="$tmp/s.netloom"
"$cli" project new "$S" >/dev/null
"${mpi[@]}" -x NETLOOM_COLLECTIVE_TIMEOUT=10 "$cli" train --project "$S" --dataset "$D" \
  --network "$src/data/networks/mlp.json" --epochs 100000 --batch-size 16 --threads 1 >"$tmp/pause.out" 2>&1 &
job=$!
ranks=($(rank_pids $job 2))
for i in $(seq 300); do "$cli" runs --project "$S" 2>/dev/null | grep -q 'epochs 1/' && break; sleep 0.2; done
kill -TSTP $job
# until mpirun has passed the stop on to every rank
stopped=no
[ ${#ranks[@]} = 2 ] && wait_stopped "${ranks[@]}" && stopped=yes
sleep 12   # stopped for longer than the collective timeout: wall-clock time only
kill -CONT $job
sleep 3
if [ $stopped = yes ] && kill -0 $job 2>/dev/null; then
  ok "SIGTSTP to mpirun stops every rank; 12 s stopped (timeout 10 s), the job goes on after SIGCONT"
else
  not_ok "pause of the job (every rank stopped: $stopped)" "$(cat "$tmp/pause.out")"
fi
kill -TERM $job
for i in $(seq 150); do kill -0 $job 2>/dev/null || break; sleep 0.2; done
"$cli" runs --project "$S" | grep -E '^ +1 +stopped ' >/dev/null \
  && ok "SIGTERM to mpirun: rank 0 marks the run stopped" || not_ok "stop of the job" "$(cat "$tmp/pause.out")"
kill -9 $job 2>/dev/null

# kill -9 of rank 1 in the middle of the second epoch (11 steps an epoch: both ranks stop
# themselves at step 16, after the first epoch's checkpoint)
K="$tmp/k.netloom"
"$cli" project new "$K" >/dev/null
"${mpi[@]}" -x NETLOOM_TEST_STOP_AT_STEP=16 "$cli" train --project "$K" --dataset "$D" --network "$lenet" --epochs 3 \
  --batch-size 128 --threads 1 --seed 1 >"$tmp/kill.out" 2>&1 &
job=$!
ranks=($(rank_pids $job 2))
killed=""
if [ ${#ranks[@]} = 2 ] && wait_stopped "${ranks[@]}"; then
  # a second process follows the MPI run live, as any other
  watched=$("$cli" watch --project "$K" --run 1 --timeout 2 2>&1)
  for p in "${ranks[@]}"; do
    if [ "$(tr '\0' '\n' </proc/$p/environ 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')" = 1 ]; then
      kill -9 "$p" && killed=$(date +%s)
    fi
  done
  kill -CONT "${ranks[@]}" 2>/dev/null
fi
# (a bound against a hang: the other rank must end by the collective timeout)
for i in $(seq 600); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
gone=$(( $(date +%s) - ${killed:-0} ))
if [ -n "$killed" ] && ! kill -0 $job 2>/dev/null && [ $gone -le 30 ]; then
  ok "rank 1 killed with kill -9: the job ended ${gone} s later"
else
  not_ok "kill -9 of rank 1 (killed '${killed}', ended after $gone s)" "$(cat "$tmp/kill.out")"
  kill -9 $job 2>/dev/null
fi
grep -q "rank 1" "$tmp/kill.out" && ok "the message names rank 1" || not_ok "message names the rank" "$(cat "$tmp/kill.out")"
grep -q "epoch 1" <<<"${watched:-}" && ok "watch follows the MPI run" || not_ok "watch of the MPI run" "${watched:-}"
info=$("$cli" project info --json "$K" 2>&1) && python3 -c 'import json, sys; assert json.loads(sys.argv[1])["integrity"] == "ok"' "$info" \
  && "$cli" runs --project "$K" | grep -E '^ +1 +interrupted .*epochs 1/3' >/dev/null \
  && ok "project intact, the run interrupted after its checkpoint" || not_ok "project after the kill" "$info $("$cli" runs --project "$K")"
out=$("$cli" resume --project "$K" --run 1 --epochs 2 --json 2>&1) && "$cli" runs --project "$K" | grep -E '^ +1 +finished .*epochs 2/' >/dev/null \
  && ok "the interrupted run resumes (1 process)" || not_ok "resume after the kill" "$out"

# checkpoints by time under MPI: rank 0's clock decides for both, the
# epoch's accuracy sums are gathered into rank 0's checkpoint; every rank
# killed inside an epoch, then resumed by 2 processes: the weights and
# metric points of the run never killed, bit for bit
T="$tmp/t.netloom"
"$cli" project new "$T" >/dev/null
tcommon=(--project "$T" --dataset "$D" --network "$lenet" --epochs 3 --seed 1 --batch-size 64 --threads 1
         --augment random-crop:28:2,flip --json)
"${mpi[@]}" "$cli" train "${tcommon[@]}" --name straight >/dev/null 2>&1
# both ranks stop themselves at step 5; stopped longer than the interval, rank 0 takes a
# checkpoint by time after step 6; stopped again at step 12 (of 21 in the epoch), killed
"${mpi[@]}" -x NETLOOM_TEST_STOP_AT_STEP=5,12 "$cli" train "${tcommon[@]}" --name killed --checkpoint-interval 0.3 \
  >"$tmp/tkill.out" 2>&1 &
job=$!
ranks=($(rank_pids $job 2))
inside=
if [ ${#ranks[@]} = 2 ] && wait_stopped "${ranks[@]}"; then
  sleep 0.5   # wall-clock time only: the ranks are stopped
  kill -CONT "${ranks[@]}"
  wait_stopped "${ranks[@]}" \
    && inside=$(sql "$T" "select count(interval_checkpoint) from runs where id = 2" 2>/dev/null)
fi
kill -9 "${ranks[@]}" 2>/dev/null
wait $job 2>/dev/null
out=$("${mpi[@]}" "$cli" resume --project "$T" --run 2 --checkpoint-interval 0 --json 2>&1) \
  && "$cli" export --project "$T" --run 1 --safetensors "$tmp/straight.st" >/dev/null \
  && "$cli" export --project "$T" --run 2 --safetensors "$tmp/resumed.st" >/dev/null
points() { "$cli" metrics --project "$T" --run "$1" --csv | cut -d, -f1-5 | grep -v 'images_per_s\|epoch_seconds\|system/'; }
[ "$inside" = 1 ] && cmp -s "$tmp/straight.st" "$tmp/resumed.st" && diff <(points 1) <(points 2) >/dev/null \
  && ok "2 processes killed inside an epoch resume from its checkpoint by time to the uninterrupted run's weights and points" \
  || not_ok "MPI resume inside an epoch (interval checkpoint: '$inside')" "$out $(cat "$tmp/tkill.out")"

echo "1..$n"
[ $failed -eq 0 ]
