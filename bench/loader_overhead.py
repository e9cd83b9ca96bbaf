#!/usr/bin/python3
"""Does the data loader hide itself? Epoch time of netloom-cli training
with the threaded loader vs the same epoch fed from memory (--preload), runs
alternated A B A B so drift hits both; prints medians and the ratio per
network as JSON lines.

  bench/loader_overhead.py [--build build] [--rounds 5] [--networks mlp,lenet]
                           [--workers 1] [--epochs 1]
"""
import argparse, json, os, statistics, subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
p = argparse.ArgumentParser()
p.add_argument("--build", default=os.path.join(ROOT, "build"))
p.add_argument("--rounds", type=int, default=5)
p.add_argument("--networks", default="mlp,lenet")
p.add_argument("--workers", default="1")
p.add_argument("--epochs", type=int, default=1)
p.add_argument("--extra", default="", help="more netloom-cli train options, e.g. '--augment flip'")
a = p.parse_args()


def epoch_seconds(net, extra):
    out = subprocess.run([os.path.join(a.build, "app", "netloom-cli"), "train", "--network",
                          os.path.join(ROOT, "data", "networks", net + ".json"), "--epochs", str(a.epochs),
                          "--lr", "0.05", "--json"] + extra + a.extra.split(),
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(l)["seconds"] for l in out.splitlines() if l.startswith("{")]


for net in a.networks.split(","):
    loader, memory = [], []
    for _ in range(a.rounds):
        loader += epoch_seconds(net, ["--workers", a.workers])
        memory += epoch_seconds(net, ["--workers", a.workers, "--preload"])
    ml, mm = statistics.median(loader), statistics.median(memory)
    print(json.dumps({"network": net, "workers": int(a.workers), "extra": a.extra,
                      "loader_epoch_s": round(ml, 4), "memory_epoch_s": round(mm, 4),
                      "ratio": round(ml / mm, 3), "loader_runs": loader, "memory_runs": memory}), flush=True)
