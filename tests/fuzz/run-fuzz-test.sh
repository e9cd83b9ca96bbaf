#!/usr/bin/env bash
# run-fuzz-test.sh TARGET WORKDIR CORPUS — the fuzz build's test of one
# target: every input of CORPUS, then 10 s of fuzzing from it at most. The
# fuzzing is seeded, so every machine tries the same inputs in the same
# order, and stops at $NETLOOM_FUZZ_TEST_RUNS (20000) inputs: a fast
# machine does not wander past what a developer's run saw, a slow one
# tries a prefix of them (tools/fuzz-run.sh is the open-ended search). New
# inputs go to WORKDIR (the source corpus stays as committed), a finding
# to WORKDIR/finding-*; libFuzzer's exit status is the test's.
set -u
# GLib's fatal criticals trap (SIGTRAP), which leaves libFuzzer no input to
# keep; nl_fuzz_init makes them abort instead
unset G_DEBUG
target=$1 work=$2 corpus=$3
rm -rf "$work"
mkdir -p "$work/new"
exec "$target" -error_exitcode=1 -timeout_exitcode=1 -seed=1 -runs=${NETLOOM_FUZZ_TEST_RUNS:-20000} -max_total_time=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$work/finding-" "$work/new" "$corpus"
