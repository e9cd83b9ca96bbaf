#!/usr/bin/python3
"""text-transformer, netloom against PyTorch 1.13 nn.TransformerEncoder, in
one run on this machine (issue 21: netloom at least 1.3x PyTorch's
samples/s, test accuracy within 0.5 points at equal epochs, peak memory of
both beside it).

The corpus is real text: tools/make-text-corpus.py's manual pages of this
machine, 5 classes by section, split here 80/20 into two CSV files with a
fixed seed, so both programs train on the same rows and test on the same
rows (netloom: --val-dataset, --val-fraction 0). netloom trains
data/networks/text-transformer.json (128 tokens, width 128, 2 layers, 4
heads) with its last Dense set to the corpus's classes;
bench/torch_text_transformer.py builds the same network and encodes the
texts with the vocabulary netloom stored with its run (the word tokenizer
re-done through GLib itself). Both: Adam, the same rate, batch and epochs,
2 threads. The programs alternate within each round (netloom first in even
rounds), so drift hits both; the summary gives medians over rounds.

  bench/text_transformer_compare.py [--build build] [--rounds 3] [--epochs 3] [--batch 64]
                                    [--lr 0.001] [--corpus CSV] [--per-class N]
"""
import argparse, csv, json, os, random, sqlite3, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
p = argparse.ArgumentParser()
p.add_argument("--build", default=os.path.join(ROOT, "build"))
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--batch", type=int, default=64)
p.add_argument("--lr", type=float, default=1e-3)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--corpus", help="a text,label CSV (default: make one with tools/make-text-corpus.py)")
p.add_argument("--per-class", type=int, default=0, help="rows per class of the made corpus (0: the tool's)")
p.add_argument("--profile", action="store_true", help="also one netloom epoch with --profile, summarised")
a = p.parse_args()
tmp = tempfile.mkdtemp(prefix="nl-text-bench-")
cli = os.path.join(a.build, "app", "netloom-cli")

corpus = a.corpus
if not corpus:
    corpus = os.path.join(tmp, "corpus.csv")
    cmd = [sys.executable, os.path.join(ROOT, "tools", "make-text-corpus.py"), corpus]
    if a.per_class:
        cmd += ["--per-class", str(a.per_class)]
    print(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout, file=sys.stderr)
rows = list(csv.DictReader(open(corpus, newline="", encoding="utf-8")))
random.Random(21).shuffle(rows)
n_test = len(rows) // 5
paths = {"train": os.path.join(tmp, "train.csv"), "test": os.path.join(tmp, "test.csv")}
for side, part in (("test", rows[:n_test]), ("train", rows[n_test:])):
    with open(paths[side], "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, ["text", "label"])
        w.writeheader()
        w.writerows({"text": r["text"], "label": r["label"]} for r in part)
classes = sorted({r["label"] for r in rows})

net = json.load(open(os.path.join(ROOT, "data", "networks", "text-transformer.json")))
for n in net["nodes"]:
    if n["id"] == "fc":
        n["params"]["units"] = len(classes)
net_path = os.path.join(tmp, "text-transformer.json")
json.dump(net, open(net_path, "w"))
project = os.path.join(tmp, "bench.netloom")
subprocess.run([cli, "project", "new", project], check=True, capture_output=True)
vocab_path = os.path.join(tmp, "vocab.json")


def lines(out):
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def netloom(seed, extra=()):
    out = subprocess.run([cli, "train", "--project", project, "--network", net_path,
                          "--dataset", "text:" + paths["train"], "--val-dataset", "text:" + paths["test"],
                          "--val-fraction", "0", "--text-column", "text", "--label-column", "label",
                          "--tokenizer", "word", "--vocab-size", "20000", "--max-length", "128",
                          "--epochs", str(a.epochs), "--batch-size", str(a.batch), "--optimizer", "adam",
                          "--lr", str(a.lr), "--threads", str(a.threads), "--seed", str(seed), "--json", *extra],
                         check=True, capture_output=True, text=True).stdout
    rows = lines(out)
    run = rows[-1]["run"]
    vocab = sqlite3.connect(project).execute("SELECT vocab FROM run_vocabs WHERE run_id = ?", (run,)).fetchone()[0]
    open(vocab_path, "w").write(vocab)
    return [{"samples_per_s": r["images_per_s"], "test_acc": r["test_acc"], "peak_rss_mb": r["peak_rss_mb"],
             "seconds": r["seconds"]} for r in rows]


def pytorch(seed):
    out = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_text_transformer.py"),
                          "--train", paths["train"], "--test", paths["test"], "--vocab", vocab_path,
                          "--epochs", str(a.epochs), "--batch", str(a.batch), "--lr", str(a.lr),
                          "--threads", str(a.threads), "--seed", str(seed)],
                         check=True, capture_output=True, text=True).stdout
    return lines(out)


results = {"netloom": [], "pytorch": []}
for r in range(a.rounds):
    # PyTorch reads the vocabulary netloom stored: netloom goes first the first time
    order = ["netloom", "pytorch"] if r % 2 == 0 or not os.path.exists(vocab_path) else ["pytorch", "netloom"]
    for impl in order:
        epochs = netloom(r) if impl == "netloom" else pytorch(r)
        for e, row in enumerate(epochs, 1):
            print(json.dumps({"impl": impl, "round": r, "epoch": e, **row}), flush=True)
        # speed: the epochs after the first (warm); accuracy: the last epoch's
        warm = epochs[1:] or epochs
        results[impl].append({"samples_per_s": statistics.median(x["samples_per_s"] for x in warm),
                              "test_acc": epochs[-1]["test_acc"], "peak_rss_mb": epochs[-1]["peak_rss_mb"]})


def med(impl, key):
    return statistics.median(x[key] for x in results[impl])


summary = {k: {"samples_per_s": med(k, "samples_per_s"), "test_acc": med(k, "test_acc"),
               "peak_rss_mb": med(k, "peak_rss_mb")} for k in results}
summary["speedup"] = summary["netloom"]["samples_per_s"] / summary["pytorch"]["samples_per_s"]
summary["accuracy_points"] = 100 * (summary["netloom"]["test_acc"] - summary["pytorch"]["test_acc"])
summary.update(rows_train=len(rows) - n_test, rows_test=n_test, classes=classes, epochs=a.epochs, batch=a.batch,
               threads=a.threads, rounds=a.rounds)
print(json.dumps({"summary": summary}), flush=True)

if a.profile:
    prof = os.path.join(tmp, "profile.json")
    subprocess.run([cli, "train", "--network", net_path, "--dataset", "text:" + paths["train"],
                    "--val-dataset", "text:" + paths["test"], "--val-fraction", "0", "--max-length", "128",
                    "--epochs", "1", "--batch-size", str(a.batch), "--optimizer", "adam", "--lr", str(a.lr),
                    "--threads", str(a.threads), "--profile", prof, "--profile-steps", "20"],
                   check=True, capture_output=True)
    print(subprocess.run([cli, "profile", prof], capture_output=True, text=True).stdout)
