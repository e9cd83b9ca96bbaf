#!/usr/bin/env bash
# run-fuzz-test.sh TARGET WORKDIR CORPUS — the fuzz build's test of one
# target: every input of CORPUS, then about 10 s of fuzzing from it. New
# inputs go to WORKDIR (the source corpus stays as committed), a finding
# to WORKDIR/finding-*; libFuzzer's exit status is the test's.
set -u
# GLib's fatal criticals trap (SIGTRAP), which leaves libFuzzer no input to
# keep; nl_fuzz_init makes them abort instead
unset G_DEBUG
target=$1 work=$2 corpus=$3
rm -rf "$work"
mkdir -p "$work/new"
exec "$target" -error_exitcode=1 -timeout_exitcode=1 -max_total_time=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$work/finding-" "$work/new" "$corpus"
