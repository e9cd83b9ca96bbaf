#!/usr/bin/env bash
# test-soak.sh — the long suite's soak: the kill-and-resume test under many seeds (other kill
# steps each time) and the heartbeat stop test again and again; each round must pass whole.
# Registered with -Dlong_tests=true (meson test --suite long); NETLOOM_SOAK_ROUNDS (10).
# Usage: test-soak.sh PATH/TO/netloom-cli   (TAP)
set -u
cli="$1"
here="$(dirname "$0")"
. "$here/cli-lib.sh"
rounds=${NETLOOM_SOAK_ROUNDS:-10}
for r in $(seq "$rounds"); do
  seed=$((20261126 + r))
  out=$(NETLOOM_RESUME_KILL_SEED=$seed bash "$here/test-resume-kill.sh" "$cli" 2>&1) \
    && ok "kill and resume, seed $seed" || not_ok "kill and resume, seed $seed" "$(grep -v '^ok' <<<"$out")"
  out=$(bash "$here/test-heartbeat-stop.sh" "$cli" 2>&1) \
    && ok "heartbeat stop, round $r" || not_ok "heartbeat stop, round $r" "$(grep -v '^ok' <<<"$out")"
done
echo "1..$n"
[ $failed -eq 0 ]
