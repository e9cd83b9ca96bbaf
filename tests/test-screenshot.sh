#!/usr/bin/env bash
# test-screenshot.sh NETLOOM ARTIFACT_DIR — `netloom --screenshot` on every
# page of the sample project (created on first start), checked structurally:
# exit 0, a PNG of the requested size, not blank. The PNGs are kept in
# ARTIFACT_DIR for people to look at. Runs under xvfb-run (meson).
set -u
netloom="$1"
artifacts="$2"
source "$(dirname "$0")/cli-lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$artifacts"
export XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" GSETTINGS_BACKEND=memory GSK_RENDERER=cairo

# png_info FILE -> "WIDTH HEIGHT DISTINCT_ROWS": rows whose raw bytes differ
# from the first row (a blank picture has 0)
png_info() {
  python3 - "$1" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = len(raw) // h
rows = [raw[i * stride + 1:(i + 1) * stride] for i in range(h)]
print(w, h, len(set(rows)))
PY
}

echo "1..18"
for page in network data training experiments; do
  out="$artifacts/$page.png"
  rm -f "$out"
  if log=$("$netloom" --screenshot "$out" --page "$page" --size 1280x800 2>&1) && [ -f "$out" ]; then
    read -r w h distinct < <(png_info "$out")
    # the window's own size, give or take its client-side decorations
    if [ "$w" -ge 1200 ] && [ "$w" -le 1300 ] && [ "$h" -ge 740 ] && [ "$h" -le 820 ] && [ "$distinct" -gt 100 ]; then
      ok "screenshot of the $page page: ${w}x${h}, $distinct distinct rows ($out)"
    else
      not_ok "screenshot of the $page page looks wrong: ${w}x${h}, $distinct distinct rows" "$log"
    fi
  else
    not_ok "screenshot of the $page page failed" "$log"
  fi
done

# the sample project was created on first start, in the user's data dir
if [ -f "$XDG_DATA_HOME/netloom/sample.netloom" ]; then
  ok "first start created the sample project"
else
  not_ok "no sample project in $XDG_DATA_HOME/netloom"
fi

log=$("$netloom" --screenshot "$tmp/x.png" --page nowhere 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q "nowhere" <<<"$log"; then ok "an unknown page is refused by name"; else not_ok "bad --page: rc $rc" "$log"; fi

printf 'not a project' > "$tmp/bad.netloom"
log=$("$netloom" --screenshot "$tmp/y.png" "$tmp/bad.netloom" 2>&1); rc=$?
if [ $rc -ne 0 ] && [ ! -f "$tmp/y.png" ] && [ "$(cat "$tmp/bad.netloom")" = "not a project" ]; then
  ok "a file that is not a project: non-zero exit, file untouched"
else
  not_ok "bad project: rc $rc" "$log"
fi
# --quantize-run shoots the Quantize dialog; alone, or for a run that is not there, it is refused
log=$("$netloom" --quantize-run 1 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q -- "--quantize-run" <<<"$log"; then ok "--quantize-run needs --screenshot"; else not_ok "--quantize-run alone: rc $rc" "$log"; fi
log=$("$netloom" --screenshot "$tmp/q.png" --quantize-run 9999 "$XDG_DATA_HOME/netloom/sample.netloom" 2>&1); rc=$?
if [ $rc -ne 0 ] && [ ! -f "$tmp/q.png" ] && grep -q "quantize" <<<"$log"; then
  ok "--quantize-run of a run that is not there: non-zero exit, no picture"
else
  not_ok "--quantize-run 9999: rc $rc" "$log"
fi
# --explain-run and --activations-run shoot the evaluation window; alone, together, or for a
# run that is not there, they are refused
for opt in --explain-run --activations-run; do
  log=$("$netloom" $opt 1 2>&1); rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$opt" <<<"$log"; then ok "$opt needs --screenshot"; else not_ok "$opt alone: rc $rc" "$log"; fi
  log=$("$netloom" --screenshot "$tmp/e.png" $opt 9999 "$XDG_DATA_HOME/netloom/sample.netloom" 2>&1); rc=$?
  if [ $rc -ne 0 ] && [ ! -f "$tmp/e.png" ] && grep -q "9999" <<<"$log"; then
    ok "$opt of a run that is not there: non-zero exit naming it, no picture"
  else
    not_ok "$opt 9999: rc $rc" "$log"
  fi
done
log=$("$netloom" --screenshot "$tmp/e.png" --explain-run 1 --activations-run 1 2>&1); rc=$?
if [ $rc -eq 2 ]; then ok "--explain-run and --activations-run: one at a time"; else not_ok "both: rc $rc" "$log"; fi
log=$("$netloom" --screenshot "$tmp/e.png" --explain-method gradcam 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q -- "--explain-method" <<<"$log"; then ok "--explain-method needs --explain-run"; else not_ok "--explain-method alone: rc $rc" "$log"; fi
# --network opens a template on the Network page (a sequence one: its cards show ≤T×C)
out="$artifacts/text-transformer.png"
rm -f "$out"
if log=$("$netloom" --screenshot "$out" --page network --network text-transformer --size 1280x1000 2>&1) && [ -f "$out" ]; then
  read -r w h distinct < <(png_info "$out")
  if [ "$w" -ge 1200 ] && [ "$distinct" -gt 100 ]; then ok "--network text-transformer: ${w}x${h} ($out)"; else not_ok "--network shot looks wrong: ${w}x${h}, $distinct rows" "$log"; fi
else
  not_ok "--network text-transformer failed" "$log"
fi
log=$("$netloom" --network lenet 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q -- "--network" <<<"$log"; then ok "--network needs --screenshot"; else not_ok "--network alone: rc $rc" "$log"; fi
log=$("$netloom" --screenshot "$tmp/n.png" --network no-such-net "$XDG_DATA_HOME/netloom/sample.netloom" 2>&1); rc=$?
if [ $rc -ne 0 ] && [ ! -f "$tmp/n.png" ] && grep -q "no-such-net" <<<"$log"; then
  ok "--network of a template that is not there: non-zero exit naming it, no picture"
else
  not_ok "--network no-such-net: rc $rc" "$log"
fi
[ "$failed" -eq 0 ]
