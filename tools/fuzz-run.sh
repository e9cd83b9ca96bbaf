#!/usr/bin/env bash
# fuzz-run.sh — run the libFuzzer targets of tests/fuzz for as long as asked.
#
#   tools/fuzz-run.sh [SECONDS | --runs N] [TARGET...]   fuzz each TARGET (default: all)
#                                                        for SECONDS (default 60) or N inputs,
#                                                        one after the other
#   tools/fuzz-run.sh --seeds                            regenerate the seed corpora
#   tools/fuzz-run.sh --test                             the fuzz build's tests: each target
#                                                        over its corpus plus 10 s of fuzzing
#
# Builds build-fuzz (clang, ASan + UBSan, -Dfuzz=enabled) when it is missing.
# Each target starts from tests/fuzz/corpus/TARGET and keeps what it learns
# in build-fuzz/fuzz-corpus/TARGET (the committed corpus is left alone; add
# an input there by hand when it is worth keeping). A finding (crash,
# sanitizer report, leak, timeout over 10 s, more than 2 GiB, a GLib
# critical or warning) is kept in tests/fuzz/findings/TARGET/ (git-ignored)
# and the run goes on (-fork=1); reproduce with
#   build-fuzz/tests/fuzz/fuzz-TARGET FILE
# At the end it prints, per target, the inputs run, the seconds, inputs per
# second and the findings; the exit status is 1 when there were findings.
# Environment: FUZZ_NICE (default 5), FUZZ_BUILD (default build-fuzz),
# FUZZ_FORK (worker processes per target, default 1), FUZZ_NO_BUILD=1 (use
# the targets already in FUZZ_BUILD, e.g. copied to a machine without
# ninja).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${FUZZ_BUILD:-build-fuzz}
# every target: tests/fuzz/fuzz-NAME.c (fuzz-replay.c is the plain main)
all=()
for f in tests/fuzz/fuzz-*.c; do
  t=${f#tests/fuzz/fuzz-}; t=${t%.c}
  [ "$t" = replay ] || all+=("$t")
done

seconds=60 runs=
case "${1:-}" in
  --runs) runs=${2:?--runs needs N}; shift 2 ;;
  --seeds) mode=seeds; shift ;;
  --test) mode=test; shift ;;
  ''|*[!0-9]*) ;;
  *) seconds=$1; shift ;;
esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

if [ ! -f "$build/build.ninja" ] && [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
  CC=clang meson setup "$build" -Dfuzz=enabled -Dcuda=disabled -Dgui=disabled -Dmpi=disabled \
    -Dbuildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false || exit 2
fi

if [ "${mode:-}" = test ]; then
  ninja -C "$build" -j2 "${all[@]/#/tests/fuzz/fuzz-}" || exit 2
  exec meson test -C "$build" --no-rebuild --suite fuzz --print-errorlogs
fi

if [ "${mode:-}" = seeds ]; then
  ninja -C "$build" -j2 tests/fuzz/fuzz-make-seeds || exit 2
  corpus=tests/fuzz/corpus
  "$build/tests/fuzz/fuzz-make-seeds" "$corpus" || exit 2
  for f in data/networks/*.json tests/fixtures/onnx-every-op.json; do
    cp "$f" "$corpus/network/seed-$(basename "$f")"
  done
  # a project in the first schema, which opening migrates
  rm -f "$corpus/project/seed-v0"
  sqlite3 "$corpus/project/seed-v0" < tests/fixtures/project-v0.sql || exit 2
  # a few node models of the ONNX test data (Debian libonnx-testdata)
  node=/usr/share/libonnx-testdata/data/node
  for t in conv_with_strides_padding gemm_default_single_elem_vector_bias relu batchnorm_example \
           maxpool_2d_default flatten_axis1 softmax_example averagepool_2d_default add_bcast \
           concat_2d_axis_0 reshape_reduced_dims; do
    [ -f "$node/test_$t/model.onnx" ] && cp "$node/test_$t/model.onnx" "$corpus/onnx/seed-$t.onnx"
  done
  du -sh "$corpus"
  exit 0
fi

for t in "${targets[@]}"; do
  [ -f "tests/fuzz/fuzz-$t.c" ] || { echo "fuzz-run: no target '$t' (${all[*]})" >&2; exit 2; }
done
[ "${FUZZ_NO_BUILD:-0}" = 1 ] || ninja -C "$build" -j2 "${targets[@]/#/tests/fuzz/fuzz-}" || exit 2

# the targets' temporary files in memory where there is a tmpfs, in one
# folder removed at the end (a crashing input leaves its files behind)
tmp=$(mktemp -d "$( [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/netloom-fuzz-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp

limit=(-max_total_time="$seconds")
[ -n "$runs" ] && limit=(-runs="$runs")
summary=()
found=0
for t in "${targets[@]}"; do
  work="$build/fuzz-corpus/$t"
  findings="$root/tests/fuzz/findings/$t"
  log="$build/fuzz-logs/$t.log"
  mkdir -p "$work" "$findings" "$(dirname "$log")"
  before=$(find "$findings" -type f | wc -l)
  start=$(date +%s.%N)
  # -fork=N: worker processes that are restarted after a finding, so the
  # run goes on; their stats come back to this process at the end
  nice -n "${FUZZ_NICE:-5}" "$build/tests/fuzz/fuzz-$t" -fork="${FUZZ_FORK:-1}" -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 "${limit[@]}" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$work" "tests/fuzz/corpus/$t" > "$log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  if [ -z "$execs" ]; then
    # -fork's parent prints its own progress lines: "#N: cov: ... exec/s: ..."
    execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  fi
  execs=${execs:-0}
  new=$(( $(find "$findings" -type f | wc -l) - before ))
  # -fork's own count, which also has the deaths that left no input
  crashes=$(grep -oE 'oom/timeout/crash: [0-9]+/[0-9]+/[0-9]+' "$log" | tail -1 | grep -oE '[0-9]+/[0-9]+/[0-9]+' |
            awk -F/ '{ print $1 + $2 + $3 }')
  [ "${crashes:-0}" -gt "$new" ] && new=$crashes
  [ "$new" -gt 0 ] && found=1
  line=$(awk -v t="$t" -v n="$execs" -v s="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" -v f="$new" -v rc="$rc" \
    'BEGIN { printf "%-11s %12d inputs %8.0f s %9.0f exec/s  %d new findings (exit %d)", t, n, s, n / (s > 0 ? s : 1), f, rc }')
  echo "$line"
  summary+=("$line")
done
echo "fuzz-run: summary (logs in $build/fuzz-logs, findings in tests/fuzz/findings)"
printf '%s\n' "${summary[@]}"
exit $found
