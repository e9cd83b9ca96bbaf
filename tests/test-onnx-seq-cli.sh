#!/usr/bin/env bash
# test-onnx-seq-cli.sh — a text run through ONNX from the command line: a
# text-lstm run (Embedding with padding index, bidirectional LSTM, masked
# mean, Dense) trained one epoch on a generated keyword set, exported with
# export --onnx; the file carries the run's vocabulary as metadata
# "netloom.vocab" (the one the project stores), and onnxruntime-node, fed
# token ids encoded with that vocabulary (padded with 0: the graph computes
# each sample's length itself), gives predict --text's scores within 1e-5.
# Usage: test-onnx-seq-cli.sh PATH/TO/netloom-cli   (TAP)
set -u
cli="$1"
src="${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}"
. "$(dirname "$0")/cli-lib.sh"
cli_project_setup

ort="${NETLOOM_ORT_MODULE:-}"
if [ -z "$ort" ] && [ -d "$src/.npm-ort/node_modules/onnxruntime-node" ]; then
  ort=$(cd "$src/.npm-ort/node_modules/onnxruntime-node" && pwd)
fi

python3 - "$tmp/kw.csv" <<'PY'
import random, sys
random.seed(3)
filler = "the a of and to in is it that was for on are with as they be at one have this from or".split()
kw = {"fruit": ["apple", "mango"], "space": ["rocket", "planet"]}
with open(sys.argv[1], "w") as f:
    f.write("text,label\n")
    for i in range(120):
        lab = random.choice(sorted(kw))
        words = random.choices(filler, k=random.randint(2, 9))
        words.insert(random.randint(0, len(words)), random.choice(kw[lab]))
        f.write('"%s",%s\n' % (" ".join(words), lab))
PY
out=$("$cli" train --project "$P" --network "$src/data/networks/text-lstm.json" --dataset "text:$tmp/kw.csv" \
      --text-column text --label-column label --tokenizer word --vocab-size 100 --max-length 12 --epochs 1 --json \
      --batch-size 16 --threads 2 --workers 0 --seed 1 2>&1) \
  && ok "a text-lstm run trains" || not_ok "text-lstm run" "$out"

out=$("$cli" export --project "$P" --run 1 --onnx "$tmp/text.onnx" 2>&1) \
  && ok "export --onnx of the text run" || not_ok "export --onnx of the text run" "$out"

# the metadata is the stored vocabulary
sql "$P" "SELECT vocab FROM run_vocabs WHERE run_id = 1" >"$tmp/vocab.json"
if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
  /usr/bin/python3 - "$tmp/text.onnx" "$tmp/vocab.json" <<'PY' && ok "the export carries the run's vocabulary as netloom.vocab" \
    || not_ok "netloom.vocab metadata"
import json, sys
import onnx
m = onnx.load(sys.argv[1])
meta = {p.key: p.value for p in m.metadata_props}
assert json.loads(meta["netloom.vocab"]) == json.load(open(sys.argv[2])), meta.get("netloom.vocab")
assert [i.name for i in m.graph.input] == ["tokens"], [i.name for i in m.graph.input]
PY
else
  n=$((n + 1)); echo "ok $n # SKIP no Python onnx package"
fi

# onnxruntime on the encoded texts = predict --text
if [ -n "$ort" ] && command -v node >/dev/null; then
  texts=("we can see the MANGO over there." "a rocket, then the long way home" "apple")
  args=()
  for i in 0 1 2; do
    python3 - "$tmp/vocab.json" "${texts[$i]}" "$tmp/t$i.x" <<'PY'
import json, re, struct, sys
v = json.load(open(sys.argv[1]))
ids = {t: k for k, t in enumerate(v["tokens"])}
words = [w for w in re.split(r"[^0-9a-z]+", sys.argv[2].lower()) if w]
x = [ids.get(w, 1) for w in words][:12]
x += [0] * (12 - len(x))
open(sys.argv[3], "wb").write(struct.pack("<12f", *x))
PY
    args+=("$tmp/text.onnx" "$tmp/t$i.x" "1,12")
  done
  if node "$src/tests/onnx_run_tensor.js" "$ort" "${args[@]}" >"$tmp/ort.txt" 2>"$tmp/ort.err"; then
    all=1
    for i in 0 1 2; do
      out=$("$cli" predict --project "$P" --run 1 --text "${texts[$i]}" --json 2>&1)
      python3 - "$out" "$(sed -n "$((i + 1))p" "$tmp/ort.txt")" <<'PY' || { all=0; not_ok "onnxruntime vs predict --text \"${texts[$i]}\"" "$out $(sed -n "$((i + 1))p" "$tmp/ort.txt")"; }
import json, math, sys
r, o = json.loads(sys.argv[1]), json.loads(sys.argv[2])
names = sorted(r["scores"])
# the export ends where the network does (Dense: scores); predict's are their softmax
m = max(o["data"])
e = [math.exp(v - m) for v in o["data"]]
got = [v / sum(e) for v in e]
assert len(got) == len(names), (got, names)
d = max(abs(r["scores"][n] - got[k]) for k, n in enumerate(names))
assert d < 1e-5, (d, r, got)
PY
    done
    [ $all -eq 1 ] && ok "onnxruntime on the vocabulary's token ids gives predict --text's scores"
  else
    not_ok "onnxruntime on the text export" "$(cat "$tmp/ort.err")"
  fi
else
  n=$((n + 1)); echo "ok $n # SKIP onnxruntime-node or node not found"
fi

echo "1..$n"
[ $failed -eq 0 ]
