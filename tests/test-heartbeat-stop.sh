#!/usr/bin/env bash
# test-heartbeat-stop.sh — a trainer stopped with SIGSTOP (Ctrl-Z) for longer than 3 heartbeats
# is marked interrupted by the next process that opens the project. After SIGCONT it takes its
# run back and finishes it as if never stopped (weights byte for byte those of a run never
# stopped, the same metric points). If another process resumed the run meanwhile, the old
# trainer stops at once with one message naming the run, exits non-zero and writes nothing
# more: the resumed run finishes as if the old one had been killed. Under mpirun, every rank stops.
# Usage: test-heartbeat-stop.sh PATH/TO/netloom-cli   (TAP)
set -u
cli="$1"
src="${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}"
. "$(dirname "$0")/cli-lib.sh"
tmp=$(mktemp -d)
trap 'kill -CONT ${old:-} ${new:-} ${ranks[@]:-} 2>/dev/null; kill -9 ${old:-} ${new:-} ${ranks[@]:-} ${group:-} 2>/dev/null; rm -rf "$tmp"' EXIT
# every process of the project: a run silent for 0.6 s is taken for dead
export NETLOOM_HEARTBEAT_INTERVAL=0.2

make_mnist "$tmp/d" 1200 100
settings=(--dataset "mnist:$tmp/d" --network "$src/data/networks/lenet.json" --epochs 6 --batch-size 32
          --threads 1 --workers 2 --seed 7 --optimizer adam --lr 0.002 --checkpoint-interval 0.2)

# (the moments: NETLOOM_TEST_STOP_AT_STEP and wait_stopped, cli-lib.sh; the sleeps below only
# let wall-clock time pass while a process is stopped: 0.6 s of silence marks a run interrupted)

"$cli" project new "$tmp/ref.netloom" >/dev/null
out=$("$cli" train --project "$tmp/ref.netloom" "${settings[@]}" --json 2>&1) \
  && "$cli" export --project "$tmp/ref.netloom" --run 1 --safetensors "$tmp/ref.safetensors" >/dev/null \
  && ok "the run never stopped" || not_ok "the run never stopped" "$out"

# same_as_ref PROJECT WHAT: the weights and metric points of the run never stopped, integrity ok
same_as_ref() {
  out=$("$cli" export --project "$1" --run 1 --safetensors "$tmp/$2.safetensors" 2>&1)
  cmp -s "$tmp/ref.safetensors" "$tmp/$2.safetensors" \
    && ok "$2: the weights are byte-identical to the run never stopped" \
    || not_ok "$2: the weights differ from the run never stopped's" "$out"
  diff <(run1_points "$tmp/ref.netloom") <(run1_points "$1") >"$tmp/points.diff" \
    && ok "$2: the same metric points, none lost or repeated ($(run1_points "$1" | wc -l))" \
    || not_ok "$2: the metric points differ" "$(head -20 "$tmp/points.diff")"
  info=$("$cli" project info "$1" 2>&1)
  grep -q "integrity ok" <<<"$info" && ok "$2: integrity ok" || not_ok "$2: integrity" "$info"
}

# 1. stopped, marked interrupted, continued: the trainer takes its run back
"$cli" project new "$tmp/a.netloom" >/dev/null
# (no --json: log lines go to stdout)
NETLOOM_TEST_STOP_AT_STEP=60 "$cli" train --project "$tmp/a.netloom" "${settings[@]}" >"$tmp/a.out" 2>"$tmp/a.err" &
old=$!
if wait_stopped $old; then
  sleep 1.2
  runs=$("$cli" runs --project "$tmp/a.netloom" 2>&1)
  grep -Eq '^ +1 +interrupted ' <<<"$runs" && ok "stopped for 6 beats: the next open marks the run interrupted" \
    || not_ok "the stopped run was not marked interrupted" "$runs"
  kill -CONT $old
else
  not_ok "the trainer did not stop itself at step 60" "$(cat "$tmp/a.err")"
fi
wait $old; s=$?
old=
[ $s -eq 0 ] && ok "continued, the trainer finished (exit 0)" || not_ok "continued, the trainer exited $s" "$(cat "$tmp/a.err")"
"$cli" runs --project "$tmp/a.netloom" | grep -Eq '^ +1 +finished .*epochs 6/6' \
  && ok "the run is finished, 6/6 epochs" || not_ok "the run did not finish" "$("$cli" runs --project "$tmp/a.netloom")"
[ "$(grep -c "^run 1 was stopped for [0-9]* s; it goes on$" "$tmp/a.out")" = 1 ] \
  && ok "the trainer said once it goes on: $(grep 'run 1 was stopped' "$tmp/a.out")" \
  || not_ok "not one word of the take-back" "$(cat "$tmp/a.out" "$tmp/a.err")"
note=$(sql "$tmp/a.netloom" "select group_concat(text, '|') from notes where run = 1")
[[ "$note" == "run 1 was stopped for "*" s (marked interrupted); it goes on" ]] \
  && ok "the run has a note: $note" || not_ok "no single note of the take-back" "$note"
[ "$(sql "$tmp/a.netloom" "select coalesce(error, '') from runs where id = 1")" = "" ] \
  && ok "the run keeps no error" || not_ok "the run has an error" "$(sql "$tmp/a.netloom" "select error from runs")"
same_as_ref "$tmp/a.netloom" "taken back"

# 2. stopped, marked interrupted, resumed by another process, then continued: the old trainer
# leaves the run to the new one
"$cli" project new "$tmp/b.netloom" >/dev/null
NETLOOM_TEST_STOP_AT_STEP=60 "$cli" train --project "$tmp/b.netloom" "${settings[@]}" --json >"$tmp/b.out" 2>"$tmp/b.err" &
old=$!
wait_stopped $old || not_ok "the trainer did not stop itself at step 60" "$(cat "$tmp/b.err")"
sleep 1.2
# the resume holds the run and has trained some of it when it stops itself at step 120
NETLOOM_TEST_STOP_AT_STEP=120 "$cli" resume --project "$tmp/b.netloom" --run 1 --checkpoint-interval 0.2 --json \
  >"$tmp/r.out" 2>"$tmp/r.err" &
new=$!
wait_stopped $new || not_ok "the resume did not stop itself at step 120" "$(cat "$tmp/r.err")"
[ "$(sql "$tmp/b.netloom" "select status || ' ' || pid from runs where id = 1")" = "running $new" ] \
  && ok "the interrupted run was resumed by another process" \
  || not_ok "the resume does not hold the run" "$(sql "$tmp/b.netloom" "select status || ' ' || pid from runs") $(cat "$tmp/r.err")"
before=$(sql "$tmp/b.netloom" "select count(*) from metrics")
kill -CONT $old
wait $old; s=$?
old=
row=$(sql "$tmp/b.netloom" "select status || ' ' || pid || ' ' || coalesce(error, '-') from runs where id = 1")
[ $s -ne 0 ] && ok "continued, the old trainer exits $s" || not_ok "continued, the old trainer exited 0" "$(cat "$tmp/b.err")"
[ "$(grep -c 'run 1 was taken over' "$tmp/b.err")" = 1 ] \
  && ok "one message on stderr: $(grep -o 'run 1 was taken over.*' "$tmp/b.err" | cut -c1-100)..." \
  || not_ok "not one message naming the run" "$(cat "$tmp/b.err")"
# (the new one is stopped at step 120)
[ "$row" = "running $new -" ] && ok "the old trainer left the run's status to the new one" \
  || not_ok "the run's row changed" "$row"
[ "$(sql "$tmp/b.netloom" "select count(*) from notes")" = 0 ] && ok "the old trainer wrote no note" \
  || not_ok "a note was written" "$(sql "$tmp/b.netloom" "select group_concat(text) from notes")"
kill -CONT $new
wait $new; s=$?
new=
[ $s -eq 0 ] && ok "the resumed run finished (exit 0)" || not_ok "the resume exited $s" "$(cat "$tmp/r.err")"
"$cli" runs --project "$tmp/b.netloom" | grep -Eq '^ +1 +finished .*epochs 6/6' \
  && ok "the run is finished, 6/6 epochs" || not_ok "the run did not finish" "$("$cli" runs --project "$tmp/b.netloom")"
[ "$(sql "$tmp/b.netloom" "select count(*) from metrics")" -gt "$before" ] \
  && ok "metric points were written after the old trainer ended" || not_ok "no points from the resume"
same_as_ref "$tmp/b.netloom" "taken over"

# 3. under mpirun -np 2: every rank stopped (as a Ctrl-Z that mpirun forwards; a rank's watchdog
# takes a stop of its own for no peer's silence), the run resumed by another process, then
# continued: every rank stops, rank 0 (the one that writes) says why, the resumed run finishes
if ! command -v mpirun >/dev/null; then
  ok "# SKIP mpirun is not installed"
else
  mpi=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" mpirun --oversubscribe -np 2)
  [ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
  "$cli" project new "$tmp/m.netloom" >/dev/null
  # every rank stops itself at step 40 (as a Ctrl-Z that mpirun forwards; a rank's watchdog
  # takes a stop of its own for no peer's silence)
  "${mpi[@]}" -x NETLOOM_TEST_STOP_AT_STEP=40 "$cli" train --project "$tmp/m.netloom" "${settings[@]}" --json \
    >"$tmp/m.out" 2>"$tmp/m.err" &
  group=$!
  # the ranks: mpirun's children (env execs mpirun)
  ranks=($(rank_pids $group 2))
  if [ ${#ranks[@]} -lt 2 ] || ! wait_stopped "${ranks[@]}" || grep -q "built without MPI" "$tmp/m.err"; then
    kill -CONT "${ranks[@]}" 2>/dev/null
    wait $group
    group=
    if grep -q "built without MPI" "$tmp/m.err"; then
      ok "# SKIP no run under mpirun: $(head -c 200 "$tmp/m.err")"
    else
      not_ok "the ranks did not stop themselves at step 40" "$(cat "$tmp/m.err")"
    fi
  else
    sleep 1.2
    NETLOOM_TEST_STOP_AT_STEP=100 "$cli" resume --project "$tmp/m.netloom" --run 1 --checkpoint-interval 0.2 --json \
      >"$tmp/mr.out" 2>"$tmp/mr.err" &
    new=$!
    wait_stopped $new || not_ok "the resume did not stop itself at step 100" "$(cat "$tmp/mr.err")"
    kill -CONT "${ranks[@]}"
    # (a bound against a hang only: the ranks end at their next step)
    for _ in $(seq 3000); do kill -0 $group 2>/dev/null || break; sleep 0.1; done
    if kill -0 $group 2>/dev/null; then
      not_ok "the ranks did not end within 300 s of the continue" "$(cat "$tmp/m.err")"
      kill -9 $group
    fi
    wait $group; s=$?
    group= ranks=()
    row=$(sql "$tmp/m.netloom" "select status || ' ' || pid from runs where id = 1")
    [ $s -ne 0 ] && ok "mpirun: every rank ended, exit $s" || not_ok "mpirun exited 0" "$(cat "$tmp/m.err")"
    [ "$(grep -c 'run 1 was taken over' "$tmp/m.err")" = 1 ] && ok "mpirun: one message naming the run" \
      || not_ok "mpirun: not one message naming the run" "$(cat "$tmp/m.err")"
    [ "$row" = "running $new" ] && ok "mpirun: rank 0 left the run to the new trainer" \
      || not_ok "the run's row changed" "$row"
    kill -CONT $new
    wait $new; s=$?
    new=
    [ $s -eq 0 ] && "$cli" runs --project "$tmp/m.netloom" | grep -Eq '^ +1 +finished .*epochs 6/6' \
      && ok "mpirun: the resumed run finished, 6/6 epochs" || not_ok "mpirun: the resume did not finish" "$(cat "$tmp/mr.err")"
    dup=$(sql "$tmp/m.netloom" "select count(*) from (select 1 from metrics group by step, split, name having count(*) > 1)")
    [ "$dup" = 0 ] && [ "$(run1_points "$tmp/m.netloom" | wc -l)" = "$(run1_points "$tmp/ref.netloom" | wc -l)" ] \
      && ok "mpirun: no metric point repeated or lost" || not_ok "mpirun: $dup points repeated" "$(run1_points "$tmp/m.netloom" | wc -l)"
  fi
fi

echo "1..$n"
[ $failed -eq 0 ]
