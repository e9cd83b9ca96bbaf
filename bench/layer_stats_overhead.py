#!/usr/bin/python3
"""The cost of layer statistics: netloom-cli train with --layer-stats-every
N against 0 (off), alternated A B A B, medians. Two measures per run: the
training loop's wall time (the epochs' "seconds") and the process's CPU
time (user + sys, from the kernel), which a busy machine's waits for a CPU
do not inflate. The per-step CPU cost comes from the difference between
epochs+1 and 1 epoch (start-up and loading cancel out).

  bench/layer_stats_overhead.py --every 1,100 --dataset fashion-mnist:/tmp/fm16k

Options: [--build build] [--rounds 5] [--networks mlp,lenet] [--epochs 2] [--threads 1]
Prints one JSON object per network and N.
"""
import argparse, json, os, resource, statistics, subprocess, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
p = argparse.ArgumentParser()
p.add_argument("--build", default=os.path.join(ROOT, "build"))
p.add_argument("--rounds", type=int, default=5)
p.add_argument("--networks", default="mlp,lenet")
p.add_argument("--epochs", type=int, default=2)
p.add_argument("--threads", type=int, default=1)
p.add_argument("--every", default="1,100")
p.add_argument("--dataset", default="fashion-mnist")
a = p.parse_args()
cli = os.path.join(a.build, "app", "netloom-cli")
tmp = tempfile.mkdtemp(prefix="netloom-lstats-")
project = os.path.join(tmp, "bench.netloom")
subprocess.run([cli, "project", "new", "--sample", project], check=True, capture_output=True)


def run(net, every, epochs):
    """(training wall seconds of the epochs after the first, CPU seconds of the whole process, steps)"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([cli, "train", "--project", project, "--network", net, "--dataset", a.dataset,
                          "--epochs", str(epochs), "--threads", str(a.threads), "--lr", "0.05",
                          "--layer-stats-every", str(every), "--json"],
                         check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return sum(r["seconds"] for r in rows[1:] or rows), cpu


for net in a.networks.split(","):
    for every in [int(x) for x in a.every.split(",")]:
        wall = {every: [], 0: []}
        cpu = {every: [], 0: []}
        cpu1 = {every: [], 0: []}
        for _ in range(a.rounds):
            for n in (every, 0):
                w, c = run(net, n, a.epochs + 1)
                _, c1 = run(net, n, 1)
                wall[n].append(w)
                cpu[n].append(c)
                cpu1[n].append(c1)
        # CPU of the extra epochs alone: start-up, loading and the first epoch cancel out
        extra = {n: statistics.median(cpu[n]) - statistics.median(cpu1[n]) for n in (every, 0)}
        res = {"network": net, "every": every, "threads": a.threads,
               "wall_s": statistics.median(wall[every]), "wall_off_s": statistics.median(wall[0]),
               "wall_ratio": round(statistics.median(wall[every]) / statistics.median(wall[0]), 4),
               "cpu_epochs_s": round(extra[every], 4), "cpu_epochs_off_s": round(extra[0], 4),
               "cpu_overhead_percent": round(100 * (extra[every] / extra[0] - 1), 2),
               "wall_runs": wall[every], "wall_off_runs": wall[0]}
        print(json.dumps(res), flush=True)
