#!/usr/bin/env bash
# test-exec-settings-cli.sh — the GPU execution options of netloom-cli
# train: --help names them; a value other than on/off is refused with one
# message naming the option; --cudnn-autotune off --cuda-graphs off
# --deterministic are stored with the run (a run without them stores the
# defaults: on, on, false). (That the CPU's weights are the same bytes
# either way: test-exec-settings.)
# Usage: test-exec-settings-cli.sh PATH/TO/netloom-cli (TAP)
set -u
cli="$1"
tmp=$(mktemp -d)
. "$(dirname "$0")/cli-lib.sh"
trap 'rm -rf "$tmp"' EXIT

make_mnist "$tmp/data" 256 64
D="mnist:$tmp/data"
P="$tmp/p.netloom"
train() { "$cli" train --project "$P" --network mlp --dataset "$D" --epochs 1 --batch-size 50 --threads 2 "$@"; }

out=$("$cli" project new --sample "$P" 2>&1) || not_ok "project new" "$out"
help=$("$cli" train --help 2>&1)
for o in --cudnn-autotune --cuda-graphs --deterministic; do
  grep -q -- "$o" <<<"$help" && ok "train --help names $o" || not_ok "help lacks $o"
done
out=$(train --cuda-graphs maybe 2>&1); s=$?
[ $s -ne 0 ] && grep -q -- "--cuda-graphs must be on or off, not 'maybe'" <<<"$out" \
  && ok "--cuda-graphs maybe is refused, naming the option" || not_ok "bad value" "$s $out"
out=$(train --cudnn-autotune 1 2>&1); s=$?
[ $s -ne 0 ] && grep -q -- "--cudnn-autotune must be on or off" <<<"$out" \
  && ok "--cudnn-autotune 1 is refused" || not_ok "bad value" "$s $out"

out=$(train 2>&1) || not_ok "train with the defaults" "$out"
out=$(train --cudnn-autotune off --cuda-graphs off --deterministic 2>&1) || not_ok "train with the options" "$out"
got=$(sql "$P" "SELECT group_concat (s, ' ') FROM (SELECT json_extract (hparams_json, '$.cudnn_autotune')
                || json_extract (hparams_json, '$.cuda_graphs') || json_extract (hparams_json, '$.deterministic') AS s
                FROM runs ORDER BY id)")
[ "$got" = "110 001" ] && ok "stored with the runs: on on off, then off off on" \
  || not_ok "stored settings" "$got"
echo "1..$n"
exit $((failed > 0))
