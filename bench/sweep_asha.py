#!/usr/bin/python3
"""Sweeps with and without ASHA on Fashion-MNIST (issue 15's benchmark).

A 24-trial random search over lr, momentum and fc1.units of the mlp, 4
epochs per trial, run twice with the same seed (so both draw the same 24
settings): once unpruned, once with --prune asha (eta 3, min 1 epoch).
Prints each trial's JSON line as netloom-cli prints it, one summary line
per sweep (best test accuracy, epochs trained, seconds), and a verdict
line against the target: ASHA's best within 0.5 points of the unpruned
best, using at most 50% of its epochs.

  bench/sweep_asha.py [--build build] [--trials 24] [--epochs 4] [--seed 1]
                      [--threads 2] [--dataset fashion-mnist] [--keep DIR]
"""
import argparse, json, os, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
p = argparse.ArgumentParser()
p.add_argument("--build", default=os.path.join(ROOT, "build"))
p.add_argument("--trials", type=int, default=24)
p.add_argument("--epochs", type=int, default=4)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--dataset", default="fashion-mnist")
p.add_argument("--space", default="lr=log:1e-3:3e-1,momentum=uniform:0.5:0.95,fc1.units=int:64:512")
p.add_argument("--prune", default="asha:eta=3,min_epochs=1")
p.add_argument("--keep", default=None, help="write the project here instead of a temporary directory")
a = p.parse_args()

cli = os.path.join(a.build, "app", "netloom-cli")
workdir = a.keep or tempfile.mkdtemp(prefix="netloom-sweep-bench-")
project = os.path.join(workdir, "sweeps.netloom")
if not os.path.exists(project):
    subprocess.run([cli, "project", "new", "--sample", project], check=True, capture_output=True)


def sweep(prune):
    cmd = [cli, "sweep", "--project", project, "--network", "mlp", "--dataset", a.dataset,
           "--epochs", str(a.epochs), "--threads", str(a.threads), "--seed", str(a.seed),
           "--space", a.space, "--trials", str(a.trials), "--strategy", "random", "--json"]
    if prune:
        cmd += ["--prune", prune]
    t0 = time.time()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    seconds = time.time() - t0
    rows = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    for r in rows:
        print(json.dumps(r), flush=True)
    end = rows[-1]
    summary = {"bench": "sweep", "prune": prune, "trials": end["trials"], "epochs": end["epochs"],
               "best_test_acc": end["best"]["value"], "best_params": end["best"]["params"],
               "pruned": sum(1 for r in rows[:-1] if r["status"] == "pruned"), "seconds": round(seconds, 1)}
    print(json.dumps(summary), flush=True)
    return summary


full = sweep(None)
asha = sweep(a.prune)
gap = (full["best_test_acc"] - asha["best_test_acc"]) * 100
share = asha["epochs"] / full["epochs"]
print(json.dumps({"bench": "sweep-asha-vs-full", "accuracy_gap_points": round(gap, 2),
                  "epoch_share": round(share, 3), "target_met": gap <= 0.5 and share <= 0.5,
                  "project": project}), flush=True)
