#!/usr/bin/env bash
# test-seq-cli.sh — sequence runs through the command line, with the
# issue's exact commands on small generated files: text-lstm learns a
# keyword-decides-the-class text set (>= 99% on its test side), stores its
# vocabulary with the run, predict --text classifies a typed text, evaluate
# works on the text run, a fork keeps the vocabulary; a vocabulary larger
# than the network's Embedding and a missing text column are one message
# each; a char-gpt run generates the same text twice for a seed; series-gru
# beats predicting the last value (its weights run in PyTorch on the
# validation windows).
# Usage: test-seq-cli.sh PATH/TO/netloom-cli   (TAP)
set -u
cli="$1"
src="${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}"
. "$(dirname "$0")/cli-lib.sh"
cli_project_setup
fast=(--batch-size 16 --optimizer adam --lr 0.01 --threads 2 --workers 0 --seed 1)

# ---- a keyword decides the class: fruit (apple, mango) or space (rocket, planet) among filler ----
python3 - "$tmp/kw.csv" "$tmp/body.csv" <<'PY'
import random, sys
random.seed(5)
filler = ("the a of and to in is it that was for on are with as his they be at one have this from or had by "
          "word but what some we can out other were all there when up use your how said an each she which do "
          "their time if will way about many then them write would like so these her long make thing see").split()
kw = {"fruit": ["apple", "mango"], "space": ["rocket", "planet"]}
rows = []
for i in range(400):
    lab = random.choice(sorted(kw))
    words = random.choices(filler, k=random.randint(4, 12))
    words.insert(random.randint(0, len(words)), random.choice(kw[lab]))
    rows.append((" ".join(words), lab))
with open(sys.argv[1], "w") as f:
    f.write("text,label\n" + "".join('"%s",%s\n' % r for r in rows))
with open(sys.argv[2], "w") as f:   # the text under another name
    f.write("body,label\n" + "".join('"%s",%s\n' % r for r in rows))
PY
out=$("$cli" train --project "$P" --network "$src/data/networks/text-lstm.json" --dataset "text:$tmp/kw.csv" \
      --text-column text --label-column label --tokenizer word --vocab-size 20000 --max-length 32 --epochs 3 --json \
      "${fast[@]}" 2>&1); s=$?
acc=$(tail -1 <<<"$out" | python3 -c 'import json, sys; print(json.loads(sys.stdin.read())["test_acc"])' 2>/dev/null)
[ $s -eq 0 ] && python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 0.99 else 1)' "$acc" \
  && ok "text-lstm learns the keyword set: test accuracy $acc" || not_ok "text-lstm on the keyword set (exit $s)" "$out"

# the vocabulary is the run's: built from the training side, <pad> 0 and <unk> 1, every keyword in it
sql "$P" "SELECT vocab FROM run_vocabs WHERE run_id = 1" >"$tmp/vocab.json"
python3 - "$tmp/vocab.json" <<'PY' && ok "the run's vocabulary is stored with it" || not_ok "the stored vocabulary" "$(cat "$tmp/vocab.json")"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["format"] == "netloom.vocab" and v["tokenizer"] == "word", v
assert v["tokens"][:2] == ["<pad>", "<unk>"] and {"apple", "mango", "rocket", "planet"} <= set(v["tokens"]), v
PY

# predict --text: a typed text with a keyword (in capitals, with punctuation: the word tokenizer lower-cases)
for t in "fruit|we can see the MANGO over there." "space|a rocket, then the long way home"; do
  want=${t%%|*} text=${t#*|}
  out=$("$cli" predict --project "$P" --run 1 --text "$text" --json 2>&1); s=$?
  python3 - "$want" "$out" <<'PY' && [ $s -eq 0 ] && ok "predict --text \"$text\": $want" || not_ok "predict --text $want (exit $s)" "$out"
import json, sys
r = json.loads(sys.argv[2])
assert r["predicted"] == sys.argv[1] and r["top"][0][0] == sys.argv[1], r
assert abs(sum(r["scores"].values()) - 1) < 1e-6 and set(r["scores"]) == {"fruit", "space"}, r
PY
done

# evaluate on the text run: the test side, encoded with the run's vocabulary
out=$("$cli" evaluate --project "$P" --run 1 --json 2>&1); s=$?
python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["accuracy"] >= 0.99 and r["samples"] == 40 and [c["name"] for c in r["classes"]] == ["fruit", "space"], r
' <<<"$out" && [ $s -eq 0 ] && ok "evaluate works on the text run" || not_ok "evaluate on the text run (exit $s)" "$out"

# a fork trains on with the parent's vocabulary, stored with the child
out=$("$cli" fork --project "$P" --run 1 --epochs 4 --json 2>&1); s=$?
[ $s -eq 0 ] && [ "$(sql "$P" "SELECT vocab FROM run_vocabs WHERE run_id = 2")" = "$(cat "$tmp/vocab.json")" ] \
  && ok "fork: the child run has the parent's vocabulary" || not_ok "fork of the text run (exit $s)" "$out"

# ---- refusals: one message each ----
python3 - "$src/data/networks/text-lstm.json" "$tmp/small-embed.json" <<'PY'
import json, sys
net = json.load(open(sys.argv[1]))
for n in net["nodes"]:
    if n["op"] == "Embedding":
        n["params"]["input_dim"] = 10
json.dump(net, open(sys.argv[2], "w"))
PY
size=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["tokens"]))' "$tmp/vocab.json")
want="netloom-cli: the vocabulary has $size tokens but Embedding 'embed' takes input_dim 10: set --vocab-size 10 or the Embedding's input_dim"
err=$("$cli" train --network "$tmp/small-embed.json" --dataset "text:$tmp/kw.csv" --max-length 32 --epochs 1 \
      "${fast[@]}" 2>&1 >/dev/null); s=$?
[ $s -eq 1 ] && [ "$err" = "$want" ] && ok "a vocabulary larger than the Embedding: refused naming the node" \
  || not_ok "vocabulary mismatch (exit $s)" "$err"

err=$("$cli" train --network "$src/data/networks/text-lstm.json" --dataset "text:$tmp/body.csv" --max-length 32 \
      --epochs 1 "${fast[@]}" 2>&1 >/dev/null); s=$?
[ $s -eq 1 ] && [ "$(wc -l <<<"$err")" = 1 ] && grep -q "body.csv" <<<"$err" && grep -q "text" <<<"$err" \
  && ok "a missing text column: one message naming the file and the column" || not_ok "missing --text-column (exit $s)" "$err"
err=$("$cli" predict --project "$P" --run 1 --text "x" --dataset "text:$tmp/kw.csv" 2>&1 >/dev/null); s=$?
[ $s -eq 2 ] && ok "predict: --text with --dataset is a usage error" || not_ok "predict --text --dataset (exit $s)" "$err"

# ---- a character language model: generate is reproducible for a seed ----
python3 -c 'import sys; open(sys.argv[1], "w").write("the quick brown fox jumps over the lazy dog. " * 40)' "$tmp/rep.txt"
out=$("$cli" train --project "$P" --network "$src/data/networks/char-gpt.json" --dataset "text-lm:$tmp/rep.txt" \
      --tokenizer char --max-length 32 --epochs 1 --json "${fast[@]}" 2>&1); s=$?
gpt=$(sql "$P" "SELECT max (id) FROM runs")
[ $s -eq 0 ] && ok "char-gpt trains on text-lm: data" || not_ok "char-gpt (exit $s)" "$out"
g1=$("$cli" generate --project "$P" --run "$gpt" --prompt "the " --tokens 40 --seed 1 2>&1); s1=$?
g2=$("$cli" generate --project "$P" --run "$gpt" --prompt "the " --tokens 40 --seed 1 2>&1); s2=$?
g3=$("$cli" generate --project "$P" --run "$gpt" --prompt "the " --tokens 40 --seed 2 2>&1); s3=$?
[ $s1 -eq 0 ] && [ $s2 -eq 0 ] && [ $s3 -eq 0 ] && [ "$g1" = "$g2" ] && [ "${g1:0:4}" = "the " ] && [ ${#g1} -eq 44 ] \
  && ok "generate --seed 1 twice: the same 40 characters after the prompt${g3:+ (seed 2: $( [ "$g1" = "$g3" ] && echo same || echo different))}" \
  || not_ok "generate reproducible (exit $s1 $s2 $s3)" "$g1"$'\n'"$g2"
g4=$("$cli" generate --project "$P" --run "$gpt" --prompt "the " --tokens 10 --temperature 0 --seed 7 2>&1)
g5=$("$cli" generate --project "$P" --run "$gpt" --prompt "the " --tokens 10 --temperature 0 --seed 8 2>&1)
[ "$g4" = "$g5" ] && ok "temperature 0 takes the most likely token whatever the seed" || not_ok "temperature 0" "$g4 / $g5"
err=$("$cli" predict --project "$P" --run "$gpt" --text "the " 2>&1 >/dev/null); s=$?
[ $s -eq 1 ] && grep -q "use netloom-cli generate" <<<"$err" \
  && ok "predict --text with a language-model run: one message" || not_ok "predict --text of char-gpt (exit $s)" "$err"
err=$("$cli" generate --project "$P" --run 1 --prompt "the " --tokens 5 2>&1 >/dev/null); s=$?
[ $s -eq 1 ] && grep -q "no language model\|not trained on text" <<<"$err" \
  && ok "generate with a classifier run: one message" || not_ok "generate with a classifier (exit $s)" "$err"

# ---- a time series: series-gru beats predicting the last value ----
python3 - "$tmp/sine.csv" <<'PY'
import math, random, sys
random.seed(2)
with open(sys.argv[1], "w") as f:
    f.write("value\n" + "".join("%.6f\n" % (math.sin(0.3 * t) + 0.5 * math.sin(0.11 * t) + random.gauss(0, 0.02))
                                for t in range(1200)))
PY
out=$("$cli" train --project "$P" --network "$src/data/networks/series-gru.json" --dataset "series:$tmp/sine.csv" \
      --target value --window 16 --horizon 1 --epochs 3 --json "${fast[@]}" 2>&1); s=$?
gru=$(sql "$P" "SELECT max (id) FROM runs")
"$cli" export --project "$P" --run "$gru" --safetensors "$tmp/gru.safetensors" >/dev/null 2>&1
res=$(python3 - "$tmp/sine.csv" "$tmp/gru.safetensors" <<'PY' 2>&1
import json, struct, sys
import numpy as np, torch
v = np.loadtxt(sys.argv[1], skiprows=1)
W, H, vf = 16, 1, 0.1
windows = len(v) - W - H + 1
n_val = int(round(vf * windows)); n_train = windows - n_val
rows = v[: n_train + W + H - 1]          # the rows the training windows cover: the z-scoring
z = (v - rows.mean()) / rows.std()
b = open(sys.argv[2], "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
t = {k: torch.tensor(np.frombuffer(b[8 + n + m["data_offsets"][0]: 8 + n + m["data_offsets"][1]],
                                   dtype=np.float32).reshape(m["shape"])) for k, m in h.items() if k != "__metadata__"}
gru = torch.nn.GRU(1, 32, batch_first=True)
fc = torch.nn.Linear(32, 1)
with torch.no_grad():
    gru.weight_ih_l0.copy_(t["gru.l0_i2h_weight"]); gru.weight_hh_l0.copy_(t["gru.h2h_weight"])
    gru.bias_ih_l0.copy_(t["gru.i2h_bias"]); gru.bias_hh_l0.copy_(t["gru.h2h_bias"])
    fc.weight.copy_(t["fc.weight"]); fc.bias.copy_(t["fc.bias"])
    idx = range(n_train, windows)
    x = torch.tensor(np.stack([z[j:j + W] for j in idx]), dtype=torch.float32).unsqueeze(-1)
    y = np.array([z[j + W] for j in idx])
    pred = fc(gru(x)[1][-1]).squeeze(-1).numpy()
mse, last = float(np.mean((pred - y) ** 2)), float(np.mean((x[:, -1, 0].numpy() - y) ** 2))
print("%.5f %.5f" % (mse, last))
sys.exit(0 if mse < 0.5 * last else 1)
PY
); r=$?
[ $s -eq 0 ] && [ $r -eq 0 ] && ok "series-gru beats the last value on the validation windows (MSE, last value: $res)" \
  || not_ok "series-gru (exit $s, $r)" "$out"$'\n'"$res"

# ---- an imported model without normalisation: evaluate and predict say which they use ----
make_mnist "$tmp/m" 64 32
if python3 -c 'import onnx' 2>/dev/null; then
  python3 - "$tmp/raw.onnx" "$tmp/raw-w.npy" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper, save
rng = np.random.default_rng(3)
w, b = rng.normal(0, 0.05, (784, 10)).astype(np.float32), rng.normal(0, 0.1, 10).astype(np.float32)
np.save(sys.argv[2], np.concatenate([w, b[None]], 0))
nodes = [helper.make_node("Flatten", ["x"], ["f"], name="flat"), helper.make_node("Gemm", ["f", "w", "b"], ["y"], name="fc")]
g = helper.make_graph(nodes, "raw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 28, 28])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
                      [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
  "$cli" import-onnx --project "$P" --name raw "$tmp/raw.onnx" >/dev/null 2>&1
  raw=$(sql "$P" "SELECT max (id) FROM runs")
  err=$("$cli" evaluate --project "$P" --run "$raw" --dataset "mnist:$tmp/m" 2>&1 >/dev/null); s=$?
  err2=$("$cli" evaluate --project "$P" --run "$raw" --dataset "mnist:$tmp/m" --mean 0.5 --std 0.25 2>&1 >/dev/null)
  [ $s -eq 0 ] && grep -qF "run $raw carries no input normalisation (an imported model): inputs go in as read" <<<"$err" \
    && grep -qF "run $raw carries no input normalisation: using the given mean 0.5, std 0.25" <<<"$err2" \
    && ok "evaluate of an imported model without normalisation says so" || not_ok "evaluate: the normalisation line (exit $s)" "$err"
  for norm in "" "--mean 0.5 --std 0.25"; do
    out=$("$cli" predict --project "$P" --run "$raw" --dataset "mnist:$tmp/m" --limit 3 --json $norm 2>"$tmp/err"); s=$?
    python3 - "$tmp/m/t10k-images-idx3-ubyte" "$tmp/raw-w.npy" "$out" ${norm:+0.5 0.25} <<'PY' \
      && [ $s -eq 0 ] && [ ! -s "$tmp/err" ] \
      && ok "predict --json ${norm:-without --mean/--std}: the normalisation it used, and softmax (W x' + b) of x' so normalised" \
      || not_ok "predict $norm of the imported model (exit $s)" "$out $(cat "$tmp/err")"
import json, sys
import numpy as np
x = np.frombuffer(open(sys.argv[1], "rb").read()[16:], np.uint8).reshape(-1, 784)[:3] / 255.0
if len(sys.argv) > 4:
    x = (x - float(sys.argv[4])) / float(sys.argv[5])
wb = np.load(sys.argv[2]); z = x @ wb[:784] + wb[784]
p = np.exp(z - z.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
rows = [json.loads(l) for l in sys.argv[3].splitlines()]
want = {"mean": 0.5, "std": 0.25, "from": "given"} if len(sys.argv) > 4 else {"mean": 0, "std": 1, "from": "none"}
assert all(r["normalisation"] == want for r in rows), rows
got = np.array([r["probabilities"] for r in rows])
assert np.abs(got - p).max() < 1e-5, (got, p)
PY
  done
fi

echo "1..$n"
[ $failed -eq 0 ]
