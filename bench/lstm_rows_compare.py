#!/usr/bin/python3
"""lstm-rows: netloom against PyTorch's nn.LSTM on Fashion-MNIST read row
by row (issue 21's speed target: netloom >= 1.5x PyTorch's best images/s,
test accuracy within 0.5 points after 2 epochs, peak memory of both).

Each round trains data/networks/lstm-rows.json with
  netloom-cli train --network data/networks/lstm-rows.json --dataset fashion-mnist --epochs 2 --json
(netloom's defaults: SGD at lr 0.1, batch 128) on 2 threads, and
bench/torch_lstm_rows.py (the same network, optimiser, lr and batch) with 1
and 2 threads (its best is the reference), alternating so that drift in
the machine's load hits all. Round r seeds both sides with r (weights and
shuffling), so the accuracies are medians over seeds. Every epoch prints
one JSON line; the summary gives per side the median images/s over all
epochs of all rounds, the peak RSS, the median final test accuracy, then
the speed ratio to PyTorch's best and the accuracy gap (points).

  bench/lstm_rows_compare.py [--build build] [--epochs 2] [--rounds 3] [--threads 2] [--torch-threads 1,2]
"""
import argparse, json, os, statistics, subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
p = argparse.ArgumentParser()
p.add_argument("--build", default=os.path.join(ROOT, "build"))
p.add_argument("--epochs", type=int, default=2)
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--torch-threads", default="1,2")
a = p.parse_args()


def run(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    rows = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    rows = [r for r in rows if "images_per_s" in r]
    for r in rows:
        print(json.dumps(r), flush=True)
    return rows


def netloom(seed):
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    return run([os.path.join(a.build, "app", "netloom-cli"), "train", "--network",
                os.path.join(ROOT, "data", "networks", "lstm-rows.json"), "--dataset", "fashion-mnist",
                "--epochs", str(a.epochs), "--threads", str(a.threads), "--seed", str(seed), "--json"], env)


def torch(seed, threads):
    # Debian's python3-torch lives with the system interpreter
    return run(["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_lstm_rows.py"), "--epochs", str(a.epochs),
                "--threads", str(threads), "--seed", str(seed)])


tthreads = [int(t) for t in a.torch_threads.split(",")]
sides = [("netloom", lambda r: netloom(r))] + [(f"pytorch-{t}t", lambda r, t=t: torch(r, t)) for t in tthreads]
runs = {name: [] for name, _ in sides}
finals = {name: [] for name, _ in sides}
for r in range(a.rounds):
    for name, fn in sides:
        rows = fn(r)
        runs[name] += rows
        finals[name].append(rows[-1]["test_acc"])
s = {k: {"images_per_s": statistics.median(r["images_per_s"] for r in v),
         "peak_rss_mb": max(r["peak_rss_mb"] for r in v),
         "test_acc": statistics.median(finals[k])} for k, v in runs.items()}
best = max((k for k in s if k.startswith("pytorch")), key=lambda k: s[k]["images_per_s"])
print(json.dumps({"summary": "lstm-rows", "epochs": a.epochs, "rounds": a.rounds, "threads": a.threads, **s,
                  "pytorch_best": best,
                  "speed_ratio": round(s["netloom"]["images_per_s"] / s[best]["images_per_s"], 3),
                  "accuracy_gap_points": round(100 * (s["netloom"]["test_acc"] - s[best]["test_acc"]), 2),
                  "memory_ratio": round(s["netloom"]["peak_rss_mb"] / s[best]["peak_rss_mb"], 3)}),
      flush=True)
