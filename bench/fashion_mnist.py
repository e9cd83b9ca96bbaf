#!/usr/bin/python3
"""netloom vs PyTorch on Fashion-MNIST, in one run, on this machine.

Trains each network with netloom-cli (both cores) and with the reference
script ../shared/bench/torch_fashion_mnist.py (PyTorch with 1 and 2 threads;
its best is the reference), alternating the runs so drift hits both. Every
epoch prints one JSON line as the tools print it; then one summary line per
network: median images/s over epochs (the first epoch excluded when there
are more than two), peak RSS, final test accuracy, and the ratio to
PyTorch's best.

  bench/fashion_mnist.py [--build build] [--epochs 3] [--networks mlp,lenet]
                         [--rounds 1] [--torch-script PATH] [--baseline-build DIR]

--baseline-build names a second build (another commit of netloom, built
side by side): it runs in every round too, alternated with the first, and
the summary gives both ratios to PyTorch and their ratio to each other.
"""
import argparse, json, os, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
p = argparse.ArgumentParser()
p.add_argument("--build", default=os.path.join(ROOT, "build"))
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--networks", default="mlp,lenet")
p.add_argument("--rounds", type=int, default=1)
p.add_argument("--torch-script", default=os.path.join(ROOT, "..", "shared", "bench", "torch_fashion_mnist.py"))
p.add_argument("--torch-threads", default="1,2")
p.add_argument("--baseline-build", default=None)
a = p.parse_args()

LR = {"mlp": 0.1, "lenet": 0.05}


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    for r in rows:
        print(json.dumps(r), flush=True)
    return rows


def netloom(net, build=None):
    return run([os.path.join(build or a.build, "app", "netloom-cli"), "train", "--network",
                os.path.join(ROOT, "data", "networks", net + ".json"), "--dataset", "fashion-mnist",
                "--epochs", str(a.epochs), "--batch-size", "128", "--optimizer", "sgd", "--lr", str(LR[net]),
                "--json"])


def torch(net, threads):
    # Debian's python3-torch lives with the system interpreter
    return run(["/usr/bin/python3", a.torch_script, "--network", net, "--epochs", str(a.epochs), "--threads", str(threads)])


def summary(rows):
    use = rows[1:] if len(rows) > 2 else rows
    return {"images_per_s": statistics.median(r["images_per_s"] for r in use),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in rows),
            "test_acc": rows[-1]["test_acc"], "train_loss": rows[-1]["train_loss"]}


for net in a.networks.split(","):
    runs = {"netloom": []}
    tthreads = [int(t) for t in a.torch_threads.split(",")]
    for t in tthreads:
        runs[f"pytorch-{t}t"] = []
    if a.baseline_build:
        runs["netloom-baseline"] = []
    for _ in range(a.rounds):
        runs["netloom"] += netloom(net)
        for t in tthreads:
            runs[f"pytorch-{t}t"] += torch(net, t)
        if a.baseline_build:
            runs["netloom-baseline"] += netloom(net, a.baseline_build)
    s = {k: summary(v) for k, v in runs.items()}
    best = max((k for k in s if k.startswith("pytorch")), key=lambda k: s[k]["images_per_s"])
    out = {"summary": net, "epochs": a.epochs, **{k: v for k, v in s.items()}, "pytorch_best": best,
           "speed_ratio": round(s["netloom"]["images_per_s"] / s[best]["images_per_s"], 3),
           "memory_ratio": round(s["netloom"]["peak_rss_mb"] / s[best]["peak_rss_mb"], 3)}
    if a.baseline_build:
        out["baseline_speed_ratio"] = round(s["netloom-baseline"]["images_per_s"] / s[best]["images_per_s"], 3)
        out["new_over_baseline"] = round(s["netloom"]["images_per_s"] / s["netloom-baseline"]["images_per_s"], 3)
    print(json.dumps(out), flush=True)
