#!/usr/bin/env bash
# test-integrity.sh — nothing damaged is used, nothing half written is
# left: packed records checked by their checksums (training stops at a
# damaged one, pack --verify lists it, version 1 files still read with a
# note), damaged checkpoints reported with the previous good one offered
# or used, and failed writes (a full filesystem) leave no output file.
# Usage: test-integrity.sh PATH/TO/netloom-cli   (TAP)
set -u
cli="$1"
src="${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}"
tmp=$(mktemp -d)
. "$(dirname "$0")/cli-lib.sh"
cleanup() { mountpoint -q "$tmp/small" 2>/dev/null && umount "$tmp/small"; rm -rf "$tmp"; }
trap cleanup EXIT

make_mnist "$tmp/data" 256 64
net="$src/data/networks/mlp.json"

# record_offset FILE K: the byte offset of record K (0 is the metadata)
record_offset() {
  python3 - "$1" "$2" <<'PY'
import struct, sys
data, k, off = open(sys.argv[1], "rb").read(), int(sys.argv[2]), 0
for i in range(k):
    while True:  # a record's parts: whole (0) or first, middle..., last (3)
        magic, lrec = struct.unpack_from("<II", data, off)
        assert magic == 0xced7230a, (i, off)
        off += 8 + ((lrec & (2**29 - 1)) + 3) // 4 * 4
        if (lrec >> 29) & 3 in (0, 3):
            break
print(off)
PY
}
# overwrite FILE AT N: N bytes at byte AT replaced by other values
overwrite() {
  python3 -c 'import sys; f = open(sys.argv[1], "r+b"); at, n = int(sys.argv[2]), int(sys.argv[3]); f.seek(at); b = f.read(n); f.seek(at); f.write(bytes((x + 97) % 256 for x in b))' "$1" "$2" "$3"
}

# ---- packed records ----
"$cli" pack --dataset "mnist:$tmp/data" --output "$tmp/train.rec" >/dev/null
out=$("$cli" pack --verify "$tmp/train.rec" 2>&1); s=$?
[ $s -eq 0 ] && [ "$out" = "$tmp/train.rec: 256 records checked, OK" ] && ok "pack --verify: a sound file is OK" \
  || not_ok "pack --verify sound (exit $s)" "$out"

# 64 bytes overwritten inside record 101 (sample 100): its pixels
at=$(record_offset "$tmp/train.rec" 101)
cp "$tmp/train.rec" "$tmp/bad.rec"
overwrite "$tmp/bad.rec" $((at + 300)) 64
want="$tmp/bad.rec: record 101 at byte $at is damaged: checksum mismatch"
err=$("$cli" train --network "$net" --dataset "packed:$tmp/bad.rec" --epochs 1 --threads 2 2>&1 >/dev/null); s=$?
[ $s -eq 1 ] && grep -qF "$want" <<<"$err" && [ "$(wc -l <<<"$err")" -eq 1 ] \
  && ok "training stops at a damaged record, naming file, record and byte" || not_ok "train on a damaged record (exit $s)" "$err"
out=$("$cli" pack --verify "$tmp/bad.rec" 2>&1); s=$?
[ $s -eq 1 ] && grep -qF "$want" <<<"$out" && grep -qF "$tmp/bad.rec: 256 records checked, 1 damaged" <<<"$out" \
  && ok "pack --verify lists the damaged record, exit 1" || not_ok "pack --verify damaged (exit $s)" "$out"
# two more, at the first and the last sample: all three listed
overwrite "$tmp/bad.rec" $(($(record_offset "$tmp/train.rec" 1) + 20)) 1
overwrite "$tmp/bad.rec" $(($(stat -c %s "$tmp/train.rec") - 5)) 1
out=$("$cli" pack --verify "$tmp/bad.rec" 2>&1); s=$?
[ $s -eq 1 ] && [ "$(grep -c 'is damaged: checksum mismatch' <<<"$out")" -eq 3 ] && grep -qF "record 1 at byte" <<<"$out" \
  && grep -qF "record 256 at byte" <<<"$out" && grep -qF "256 records checked, 3 damaged" <<<"$out" \
  && ok "pack --verify lists every damaged record" || not_ok "pack --verify three damaged (exit $s)" "$out"
# broken framing: one error, exit 1
cp "$tmp/train.rec" "$tmp/frame.rec"
overwrite "$tmp/frame.rec" "$(record_offset "$tmp/train.rec" 7)" 4
err=$("$cli" pack --verify "$tmp/frame.rec" 2>&1 >/dev/null); s=$?
[ $s -eq 1 ] && grep -qF "frame.rec: record 7 at byte" <<<"$err" && [ "$(wc -l <<<"$err")" -eq 1 ] \
  && ok "pack --verify: broken framing is one error" || not_ok "pack --verify framing (exit $s)" "$err"

# a version 1 file (packed before checksums): reads, with the note once
v1="$src/tests/fixtures/packed-v1.rec"
err=$("$cli" train --network "$net" --dataset "packed:$v1" --epochs 2 --batch-size 4 --threads 2 2>&1 >/dev/null); s=$?
[ $s -eq 0 ] && [ "$(grep -c 'packed-v1.rec is a packed file of format version 1: its records carry no checksum' <<<"$err")" -eq 1 ] \
  && ok "a version 1 packed file trains, with one note that it has no checksums" || not_ok "version 1 training (exit $s)" "$err"
out=$("$cli" pack --verify "$v1" 2>&1); s=$?
[ $s -eq 0 ] && grep -qF "$v1: 16 records checked, structure OK; format version 1 has no checksums" <<<"$out" \
  && ok "pack --verify on a version 1 file says it has no checksums, exit 0" || not_ok "pack --verify version 1 (exit $s)" "$out"
err=$("$cli" pack --verify "$tmp/train.rec" --output x 2>&1); s=$?
[ $s -eq 2 ] && ok "pack --verify takes no --output" || not_ok "pack --verify usage (exit $s)" "$err"

# ---- checkpoints ----
P="$tmp/p.netloom"
"$cli" project new --sample "$P" >/dev/null
"$cli" train --project "$P" --network mlp --dataset "mnist:$tmp/data" --epochs 3 --threads 2 --keep-checkpoints 5 \
  --json >/dev/null || not_ok "train a run with checkpoints"
ids=$(python3 -c 'import sqlite3, sys; print(" ".join(str(r[0]) for r in sqlite3.connect(sys.argv[1]).execute("SELECT id FROM checkpoints WHERE run = 1 ORDER BY id")))' "$P")
set -- $ids
c2=$2 c3=$3
"$cli" export --project "$P" --run 1 --checkpoint 2 --safetensors "$tmp/epoch2.safetensors" >/dev/null
# damage the last checkpoint's blob (epoch 3): one byte of its tensor data
python3 - "$P" "$c3" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
blob = bytearray(db.execute("SELECT blob FROM checkpoints WHERE id = ?", (int(sys.argv[2]),)).fetchone()[0])
blob[len(blob) // 2] ^= 0x20
db.execute("UPDATE checkpoints SET blob = ? WHERE id = ?", (bytes(blob), int(sys.argv[2])))
db.commit()
PY
damaged="checkpoint $c3 (epoch 3) of run 1 is damaged: checksum mismatch"
offer="the previous good one is epoch 2 (checkpoint $c2): use --checkpoint 2"
err=$("$cli" export --project "$P" --run 1 --checkpoint 3 --safetensors "$tmp/e3.safetensors" 2>&1 >/dev/null); s=$?
[ $s -eq 1 ] && grep -qF "$damaged" <<<"$err" && grep -qF "$offer" <<<"$err" && [ "$(wc -l <<<"$err")" -eq 1 ] \
  && [ ! -e "$tmp/e3.safetensors" ] && ok "export of a damaged checkpoint by epoch: one message, the previous good one offered" \
  || not_ok "export damaged epoch (exit $s)" "$err"
err=$("$cli" fork --project "$P" --run 1 --checkpoint 3 --epochs 4 2>&1 >/dev/null); s=$?
[ $s -eq 1 ] && grep -qF "$damaged" <<<"$err" && grep -qF "$offer" <<<"$err" \
  && [ "$("$cli" runs --project "$P" --json | wc -l)" -eq 1 ] \
  && ok "fork from a damaged checkpoint: the message, no run created" || not_ok "fork damaged (exit $s)" "$err"
err=$("$cli" evaluate --project "$P" --run 1 --checkpoint 3 --dataset "mnist:$tmp/data" 2>&1 >/dev/null); s=$?
[ $s -eq 1 ] && grep -qF "$damaged" <<<"$err" && grep -qF "$offer" <<<"$err" \
  && ok "evaluate of a damaged checkpoint: the message" || not_ok "evaluate damaged (exit $s)" "$err"
# "last" means the newest good one: used, with a warning
err=$("$cli" export --project "$P" --run 1 --safetensors "$tmp/last.safetensors" 2>&1 >/dev/null); s=$?
[ $s -eq 0 ] && grep -qF "warning: $damaged" <<<"$err" && grep -qF "using the previous good one, checkpoint $c2 (epoch 2)" <<<"$err" \
  && cmp -s "$tmp/last.safetensors" "$tmp/epoch2.safetensors" \
  && ok "export of the last checkpoint falls back to the previous good one, with a warning" \
  || not_ok "export last fallback (exit $s)" "$err"
out=$("$cli" resume --project "$P" --run 1 --epochs 4 --json 2>"$tmp/resume.err"); s=$?
[ $s -eq 0 ] && grep -qF "$damaged" "$tmp/resume.err" && grep -qF "using the previous good one, checkpoint $c2 (epoch 2)" "$tmp/resume.err" \
  && [ "$(grep -c '^{' <<<"$out")" -eq 2 ] && grep -q '"epoch":3' <<<"$out" && grep -q '"epoch":4' <<<"$out" \
  && ok "resume from a damaged last checkpoint warns and trains on from the previous good one (epochs 3-4)" \
  || not_ok "resume fallback (exit $s)" "$out
$(cat "$tmp/resume.err")"
# every checkpoint of run 2 damaged: nothing to fall back to
"$cli" train --project "$P" --network mlp --dataset "mnist:$tmp/data" --epochs 1 --threads 2 --json >/dev/null
python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for i, b in db.execute("SELECT id, blob FROM checkpoints WHERE run = 2").fetchall():
    b = bytearray(b); b[-1] ^= 1
    db.execute("UPDATE checkpoints SET blob = ? WHERE id = ?", (bytes(b), i))
db.commit()' "$P"
err=$("$cli" resume --project "$P" --run 2 --epochs 2 2>&1 >/dev/null); s=$?
[ $s -eq 1 ] && grep -qF "of run 2 is damaged: checksum mismatch" <<<"$err" && grep -qF "the run has no sound checkpoint before it" <<<"$err" \
  && ok "resume with no sound checkpoint: the message, exit 1" || not_ok "resume nothing sound (exit $s)" "$err"

# ---- failed writes leave no file behind ----
mkdir -p "$tmp/small"
if mount -t tmpfs -o size=64k tmpfs "$tmp/small" 2>/dev/null; then
  echo "the file from before" >"$tmp/small/keep.rec"
  cp "$tmp/small/keep.rec" "$tmp/small/keep.safetensors"
  err=$("$cli" pack --dataset "mnist:$tmp/data" --output "$tmp/small/train.rec" 2>&1 >/dev/null); s=$?
  [ $s -eq 1 ] && grep -q "No space left on device" <<<"$err" && [ "$(ls "$tmp/small")" = "keep.rec
keep.safetensors" ] && ok "pack onto a full filesystem: an error and no file" || not_ok "pack ENOSPC (exit $s)" "$err
$(ls -la "$tmp/small")"
  err=$("$cli" pack --dataset "mnist:$tmp/data" --output "$tmp/small/keep.rec" 2>&1 >/dev/null); s=$?
  [ $s -eq 1 ] && [ "$(cat "$tmp/small/keep.rec")" = "the file from before" ] && [ "$(ls "$tmp/small" | wc -l)" -eq 2 ] \
    && ok "pack over an existing file on a full filesystem leaves it untouched" || not_ok "pack ENOSPC over a file (exit $s)" "$err"
  err=$("$cli" export --project "$P" --run 1 --safetensors "$tmp/small/keep.safetensors" 2>&1 >/dev/null); s=$?
  [ $s -eq 1 ] && grep -q "No space left on device" <<<"$err" && [ "$(cat "$tmp/small/keep.safetensors")" = "the file from before" ] \
    && [ "$(ls "$tmp/small" | wc -l)" -eq 2 ] && ok "export onto a full filesystem: an error, the old file untouched, no other" \
    || not_ok "export ENOSPC (exit $s)" "$err
$(ls -la "$tmp/small")"
  if "$cli" export --help 2>&1 | grep -q -- --onnx; then
    err=$("$cli" export --project "$P" --run 1 --onnx "$tmp/small/m.onnx" 2>&1 >/dev/null); s=$?
    [ $s -eq 1 ] && [ "$(ls "$tmp/small" | wc -l)" -eq 2 ] && ok "ONNX export onto a full filesystem leaves no file" \
      || not_ok "ONNX ENOSPC (exit $s)" "$err"
  fi
  umount "$tmp/small"
else
  ok "# SKIP cannot mount a small tmpfs (not root): the full-filesystem checks need one"
fi

echo "1..$n"
[ $failed -eq 0 ]
