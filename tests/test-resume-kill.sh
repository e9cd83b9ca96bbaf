#!/usr/bin/env bash
# test-resume-kill.sh — resume from any moment: `kill -9` at seeded random moments, again and
# again (one before the first checkpoint, most between checkpoints taken
# every 0.2 s, three inside an epoch), with a resume after each, ends with weights byte for
# byte those of a run never interrupted (augmentation on, one thread), and
# with the same metric points. Usage: test-resume-kill.sh PATH/TO/netloom-cli   (TAP)
# NETLOOM_RESUME_KILL_SEED draws other kill steps (the long suite's soak runs many).
# NETLOOM_RESUME_KILL_ARGS adds training options (the GPU check runs it
# with "--device cuda:0 --precision fp16").
set -u
cli="$1"
src="${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}"
. "$(dirname "$0")/cli-lib.sh"
tmp=$(mktemp -d)
trap 'kill -9 ${victim:-} 2>/dev/null; rm -rf "$tmp"' EXIT

make_mnist "$tmp/d" 1200 100
settings=(--dataset "mnist:$tmp/d" --network "$src/data/networks/lenet.json" --epochs 6 --batch-size 32
          --threads 1 --workers 2 --augment random-crop:28:2,flip --seed 7 --optimizer adam --lr 0.002
          --lr-schedule cosine ${NETLOOM_RESUME_KILL_ARGS:-})


"$cli" project new "$tmp/ref.netloom" >/dev/null
out=$("$cli" train --project "$tmp/ref.netloom" "${settings[@]}" --checkpoint-interval 0 --json 2>&1) \
  && "$cli" export --project "$tmp/ref.netloom" --run 1 --safetensors "$tmp/ref.safetensors" >/dev/null \
  && ok "the uninterrupted run" || not_ok "the uninterrupted run" "$out"

"$cli" project new "$tmp/k.netloom" >/dev/null
# Kill moments are seeded and set in steps, never in seconds, so that a fast machine and a slow
# one kill at the same moments: each process is started with NETLOOM_TEST_STOP_AT_STEP (it stops
# itself there, cli-lib.sh) and killed once stopped. The first kill comes before the first step
# (so before any checkpoint), the second after step 2, the others at 8 distinct steps drawn in
# the first 70% of the run's 228 (38 an epoch), none in an epoch's last 3; every third of those
# stops first at step S for longer than the 0.2 s interval, so that step S+1 takes a checkpoint
# by time, then at S+2: its resume starts inside an epoch.
RANDOM=${NETLOOM_RESUME_KILL_SEED:-20261126}
targets=()
while [ ${#targets[@]} -lt 8 ]; do
  s=$((5 + RANDOM % 155))
  [ $((s % 38)) -le 34 ] && [[ " ${targets[*]} " != *" $s "* ]] && targets+=($s)
done
targets=($(printf '%s\n' "${targets[@]}" | sort -n))
count() { sql "$tmp/k.netloom" "$1"; }
kills=0 before_first=0 inside=0 finished=0
for attempt in $(seq 20); do
  stop=
  if [ $kills -eq 0 ]; then
    stop=0
  elif [ $kills -eq 1 ]; then
    stop=2
  elif [ $kills -lt 10 ]; then
    at=${targets[$((kills - 2))]}
    stop=$at
    [ $((kills % 3)) -eq 0 ] && stop="$at,$((at + 2))"
  fi
  if [ "$(count "select count(*) from runs")" = 0 ]; then
    # killed before even its run row was written: start it again
    NETLOOM_TEST_STOP_AT_STEP=$stop "$cli" train --project "$tmp/k.netloom" "${settings[@]}" --checkpoint-interval 0.2 \
      --json >"$tmp/out" 2>&1 &
  else
    NETLOOM_TEST_STOP_AT_STEP=$stop "$cli" resume --project "$tmp/k.netloom" --run 1 --checkpoint-interval 0.2 \
      --json >"$tmp/out" 2>&1 &
  fi
  victim=$!
  [ -z "$stop" ] && break
  if wait_stopped $victim && [[ "$stop" == *,* ]]; then
    sleep 0.3   # wall-clock time only: the process is stopped
    kill -CONT $victim
    wait_stopped $victim
  fi
  if ! kill -0 $victim 2>/dev/null; then
    wait $victim; s=$?
    [ $s -eq 0 ] && { finished=1; break; }
    not_ok "attempt $attempt failed on its own" "$(cat "$tmp/out")"; break
  fi
  kill -9 $victim; wait $victim 2>/dev/null
  kills=$((kills + 1))
  [ "$(count "select count(*) from checkpoints")" = 0 ] && before_first=$((before_first + 1))
  [ "$(count "select count(interval_checkpoint) from runs")" = 1 ] && inside=$((inside + 1))
done
if [ $finished = 0 ]; then
  wait $victim; s=$?
  [ $s -eq 0 ] && finished=1 || not_ok "the last resume" "$(cat "$tmp/out")"
fi
victim=
[ $kills -ge 10 ] && ok "$kills kills, each followed by a resume ($before_first before the first checkpoint)" \
  || not_ok "only $kills kills before the run finished"
[ $before_first -ge 1 ] && ok "some kills came before the first checkpoint" || not_ok "no kill before the first checkpoint"
[ $inside -ge 3 ] && ok "$inside resumes started inside an epoch, from a checkpoint by time" \
  || not_ok "only $inside resumes started inside an epoch"
[ $finished = 1 ] && "$cli" runs --project "$tmp/k.netloom" | grep -Eq '^ +1 +finished .*epochs 6/6' \
  && ok "the run finished" || not_ok "the run did not finish" "$("$cli" runs --project "$tmp/k.netloom")"

out=$("$cli" export --project "$tmp/k.netloom" --run 1 --safetensors "$tmp/k.safetensors" 2>&1)
cmp -s "$tmp/ref.safetensors" "$tmp/k.safetensors" \
  && ok "the weights are byte-identical to the uninterrupted run's ($(sha256sum <"$tmp/k.safetensors" | cut -c1-16))" \
  || not_ok "the weights differ from the uninterrupted run's" "$out"
diff <(run1_points "$tmp/ref.netloom") <(run1_points "$tmp/k.netloom") >"$tmp/points.diff" \
  && ok "the same metric points, none lost or repeated ($(run1_points "$tmp/k.netloom" | wc -l))" \
  || not_ok "the metric points differ" "$(head -20 "$tmp/points.diff")"
info=$("$cli" project info "$tmp/k.netloom" 2>&1)
grep -q "integrity ok" <<<"$info" && ok "integrity ok" || not_ok "integrity" "$info"
# interval checkpoints rotate: one at most, and none once an epoch's is newer
n_interval=$(count "select count(interval_checkpoint) from runs")
[ "$n_interval" = 0 ] && ok "no interval checkpoint left after the last epoch's" || not_ok "interval checkpoints left: $n_interval"

echo "1..$n"
[ $failed -eq 0 ]
