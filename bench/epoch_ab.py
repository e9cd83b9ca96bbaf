#!/usr/bin/python3
"""Epoch time of two netloom-cli training set-ups, alternated A B A B so
drift hits both; prints the medians and the ratio A/B per network as JSON.

  # the threaded loader vs the same epoch fed from memory (must be <= 1.05)
  bench/epoch_ab.py --a "--workers 1" --b "--workers 1 --preload"
  # logging every batch to a project vs not logging (must be <= 1.02)
  bench/epoch_ab.py --a "--project {project}" --b ""

{project} becomes a fresh sample project in a temporary folder.
Options: [--build build] [--rounds 5] [--networks mlp,lenet] [--epochs 2]
"""
import argparse, json, os, shlex, statistics, subprocess, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
p = argparse.ArgumentParser()
p.add_argument("--build", default=os.path.join(ROOT, "build"))
p.add_argument("--rounds", type=int, default=5)
p.add_argument("--networks", default="mlp,lenet")
p.add_argument("--epochs", type=int, default=2)
p.add_argument("--a", required=True)
p.add_argument("--b", required=True)
a = p.parse_args()
cli = os.path.join(a.build, "app", "netloom-cli")
tmp = tempfile.mkdtemp(prefix="netloom-ab-")
project = os.path.join(tmp, "bench.netloom")
subprocess.run([cli, "project", "new", "--sample", project], check=True, capture_output=True)


def epoch_seconds(net, opts):
    args = [x.replace("{project}", project) for x in shlex.split(opts)]
    out = subprocess.run([cli, "train", "--network", os.path.join(ROOT, "data", "networks", net + ".json"),
                          "--epochs", str(a.epochs), "--lr", "0.05", "--json"] + args,
                         check=True, capture_output=True, text=True).stdout
    rows = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    return [r["seconds"] for r in rows[1:] or rows]  # the first epoch warms caches


for net in a.networks.split(","):
    ta, tb = [], []
    for _ in range(a.rounds):
        ta += epoch_seconds(net, a.a)
        tb += epoch_seconds(net, a.b)
    ma, mb = statistics.median(ta), statistics.median(tb)
    print(json.dumps({"network": net, "a": a.a, "b": a.b, "a_epoch_s": round(ma, 4), "b_epoch_s": round(mb, 4),
                      "ratio": round(ma / mb, 3), "a_runs": ta, "b_runs": tb}), flush=True)
