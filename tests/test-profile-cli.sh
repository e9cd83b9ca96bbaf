#!/usr/bin/env bash
# test-profile-cli.sh — train --profile and netloom-cli profile: the trace
# of a short LeNet training is Chrome trace-event JSON with every node's
# forward and backward at every step inside that step's span, the loader's
# batches and the loop's waits; the profile table's figures equal a hand sum
# over the file's events; profile/<node>/ms and system/ metrics in a
# project; damaged traces and unwritable paths give one message.
# Structural checks only: nothing here depends on how fast the machine is.
# Usage: test-profile-cli.sh PATH/TO/netloom-cli   (TAP)
set -u
cli="$1"
src="${NETLOOM_SOURCE_DIR:-$(dirname "$0")/..}"
tmp=$(mktemp -d)
. "$(dirname "$0")/cli-lib.sh"
trap 'rm -rf "$tmp"' EXIT

make_mnist "$tmp/m" 256 64
net="$src/data/networks/lenet.json"
# 4 batches an epoch, 2 epochs: steps 1 to 8; ops in order on the training thread
common=(--network "$net" --dataset "mnist:$tmp/m" --batch-size 64 --epochs 2 --threads 2 --workers 2
        --scheduler-workers 0 --seed 3 --lr 0.02)

out=$("$cli" train "${common[@]}" --profile "$tmp/t.json" 2>&1); s=$?
[ $s -eq 0 ] && grep -qF "profile: steps 1 to 8 traced to $tmp/t.json" <<<"$out" \
  && ok "train --profile writes the trace and says so" || not_ok "train --profile (exit $s)" "$out"
ls "$tmp" | grep -q "tmp-" && not_ok "a temporary file was left beside the trace" "$(ls "$tmp")"

err=$(python3 - "$tmp/t.json" "$net" 2>&1 <<'PY'
import json, sys
from collections import defaultdict
d = json.load(open(sys.argv[1]))
net = json.load(open(sys.argv[2]))
ev = d["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
for e in x:
    assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and "pid" in e and "tid" in e, e
ops = [e for e in x if e["cat"] == "op"]
steps = {e["args"]["step"]: e for e in x if e["cat"] == "step"}
assert sorted(steps) == list(range(1, 9)), sorted(steps)
# every node's forward at every step, and its backward but for the Input
by = defaultdict(set)
for e in ops:
    by[(e["args"]["node"], e["args"]["pass"])].add(e["args"]["step"])
    assert e["name"] == e["args"]["node"] + " " + e["args"]["pass"], e
for n in net["nodes"]:
    assert by[(n["id"], "forward")] == set(range(1, 9)), (n["id"], by[(n["id"], "forward")])
    if n["op"] != "Input":
        assert by[(n["id"], "backward")] == set(range(1, 9)), (n["id"], "backward")
# each weighted node's optimizer update at every step
updates = [e for e in x if e["cat"] == "update"]
for n in net["nodes"]:
    if n["op"] in ("Conv2D", "Dense"):
        assert {e["args"]["step"] for e in updates if e["name"] == n["id"] + " update"} == set(range(1, 9)), n
# the ops and updates of a step lie inside its span, on its thread, and take no more than it
for s, st in steps.items():
    mine = [e for e in ops + updates if e["args"]["step"] == s]
    for e in mine:
        assert e["tid"] == st["tid"] and st["ts"] <= e["ts"] and e["ts"] + e["dur"] <= st["ts"] + st["dur"], (e, st)
    assert sum(e["dur"] for e in mine) <= st["dur"], s
# the loader's batches, 1 to 4 each epoch, on its threads; the loop's waits on the training thread
loader = [e for e in x if e["cat"] == "loader"]
assert sorted(e["args"]["batch"] for e in loader) == [1, 1, 2, 2, 3, 3, 4, 4], loader
assert all(names[e["tid"]].startswith("nl-loader-") for e in loader), names
waits = [e for e in x if e["cat"] == "input"]
assert len(waits) == 8 and all(e["tid"] == steps[1]["tid"] for e in waits), waits
PY
) && ok "the trace: every node's forward, backward and update at steps 1-8 inside each step's span, loader batches, waits" \
  || not_ok "trace structure" "$err"

# with a pool of scheduler workers: every op on one of them, named as such
out=$("$cli" train "${common[@]}" --scheduler-workers 2 --profile "$tmp/w.json" --profile-steps 2 2>&1); s=$?
err=$(python3 - "$tmp/w.json" "$net" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = {e["tid"]: e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
ops = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "op"]
assert all(names[e["tid"]].startswith("nl-sched-") for e in ops), {names[e["tid"]] for e in ops}
seen = {(e["args"]["node"], e["args"]["pass"], e["args"]["step"]) for e in ops}
for n in json.load(open(sys.argv[2]))["nodes"]:
    for step in (1, 2):
        assert (n["id"], "forward", step) in seen and (n["op"] == "Input" or (n["id"], "backward", step) in seen), n
PY
)
[ $s -eq 0 ] && [ -z "$err" ] && ok "--scheduler-workers 2: every op's forward and backward on the scheduler's worker threads" \
  || not_ok "trace with scheduler workers (exit $s)" "$err $out"

# the table against a hand sum over the file's op events
"$cli" profile "$tmp/t.json" --json >"$tmp/table.json" 2>"$tmp/err"; s=$?
err=$(python3 - "$tmp/t.json" "$tmp/table.json" 2>&1 <<'PY'
import json, sys
from collections import defaultdict
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X" and e.get("cat") == "op"]
t = json.load(open(sys.argv[2]))
total = sum(e["dur"] for e in ev) / 1e3
assert abs(t["total_ms"] - total) < 1e-6, (t["total_ms"], total)
assert t["steps"] == 8 and t["time"] == "host", t
for key, rows in (("node", t["layers"]), ("op", t["ops"])):
    calls, ms = defaultdict(int), defaultdict(float)
    for e in ev:
        calls[e["args"][key]] += 1
        ms[e["args"][key]] += e["dur"] / 1e3
    assert {r["name"] for r in rows} == set(calls), (key, rows)
    for r in rows:
        assert r["calls"] == calls[r["name"]], r
        assert abs(r["total_ms"] - ms[r["name"]]) < 1e-6, (r, ms[r["name"]])
        assert abs(r["mean_ms"] - ms[r["name"]] / calls[r["name"]]) < 1e-6, r
        assert abs(r["share"] - (ms[r["name"]] / total if total else 0)) < 1e-6, r
    assert [r["total_ms"] for r in rows] == sorted((r["total_ms"] for r in rows), reverse=True)
PY
)
[ $s -eq 0 ] && [ -z "$err" ] && ok "profile --json: calls, total, mean and share per layer and op equal a hand sum" \
  || not_ok "profile --json (exit $s)" "$err $(cat "$tmp/err")"
out=$("$cli" profile "$tmp/t.json" 2>&1); s=$?
[ $s -eq 0 ] && grep -qE "^  conv1 +Conv2D +16 " <<<"$out" && grep -qE "^  Conv2D +32 " <<<"$out" \
  && grep -qF "8 steps" <<<"$out" && ok "profile prints the per-layer and per-op table" || not_ok "profile (exit $s)" "$out"

# in a project: the first 3 steps profiled, profile/<node>/ms and the system metrics
P="$tmp/p.netloom"
"$cli" project new "$P" >/dev/null
out=$("$cli" train "${common[@]}" --project "$P" --profile "$tmp/p3.json" --profile-steps 3 2>&1); s=$?
err=$(python3 - "$tmp/p3.json" "$P" "$(nproc)" 2>&1 <<'PY'
import json, sqlite3, sys
from collections import defaultdict
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X" and e.get("cat") == "op"]
assert {e["args"]["step"] for e in ev} == {1, 2, 3}
ms = defaultdict(float)
for e in ev:
    ms[e["args"]["node"]] += e["dur"] / 1e3 / 3
db = sqlite3.connect(sys.argv[2])
rows = db.execute("select name, step, value, split from metrics where run = 1").fetchall()
prof = {r[0][len("profile/"):-len("/ms")]: r for r in rows if r[0].startswith("profile/")}
assert set(prof) == set(ms), (sorted(prof), sorted(ms))
for node, (name, step, value, split) in prof.items():
    assert step == 3 and split == "train" and abs(value - ms[node]) < 1e-6, (name, step, value, ms[node])
system = [r for r in rows if r[0].startswith("system/")]
names = {r[0] for r in system}
assert names == {"system/cpu_percent", "system/rss_mb", "system/input_wait_ms"}, names  # no GPU
for name, step, value, split in system:
    assert split == "train" and 1 <= step <= 8, (name, step)
    if name == "system/cpu_percent":
        assert 0 <= value <= 100 * int(sys.argv[3]), value
    elif name == "system/rss_mb":
        assert value > 0, value
    else:
        assert value >= 0, value
# after the first step and at the end at least
assert sum(1 for r in system if r[0] == "system/rss_mb") >= 2
PY
)
[ $s -eq 0 ] && [ -z "$err" ] && grep -qF "profile: steps 1 to 3 traced" <<<"$out" \
  && ok "train --project --profile-steps 3: profile/<node>/ms equal the trace's means; system metrics plausible" \
  || not_ok "profile in a project (exit $s)" "$err $out"

# damaged traces: one message naming the file and what is wrong
head -c 2000 "$tmp/t.json" >"$tmp/cut.json"
: >"$tmp/empty.json"
echo '{"traceEvents":[{"ph":"X","name":"a","ts":0,"pid":1,"tid":1}]}' >"$tmp/nodur.json"
echo '{"events":[]}' >"$tmp/other.json"
python3 - "$tmp/t.json" "$tmp/noargs.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["traceEvents"]:
    if e.get("cat") == "op":
        del e["args"]["node"]
        break
json.dump(d, open(sys.argv[2], "w"))
PY
for f in cut:"is not JSON" empty:"is not JSON" nodur:'"dur"' other:traceEvents noargs:'"node"' missing:"No such file"; do
  name=${f%%:*} why=${f#*:}
  err=$("$cli" profile "$tmp/$name.json" 2>&1 >"$tmp/out"); s=$?
  [ $s -eq 1 ] && [ "$(wc -l <<<"$err")" = 1 ] && grep -qF "$tmp/$name.json" <<<"$err" && grep -qF "$why" <<<"$err" \
    && [ ! -s "$tmp/out" ] && ok "profile of a damaged trace ($name): one message" || not_ok "damaged $name (exit $s)" "$err"
done

# a trace that cannot be written is said before training; --profile-steps alone is a usage error
err=$("$cli" train "${common[@]}" --profile "$tmp/no/such/dir/t.json" 2>&1); s=$?
[ $s -eq 1 ] && [ "$(wc -l <<<"$err")" = 1 ] && grep -qF "$tmp/no/such/dir/t.json" <<<"$err" \
  && ok "train --profile to a directory that is not there: one message, no training" || not_ok "unwritable (exit $s)" "$err"
err=$("$cli" train "${common[@]}" --profile-steps 3 2>&1); s=$?
[ $s -eq 2 ] && grep -qF -- "--profile-steps" <<<"$err" && ok "--profile-steps without --profile is a usage error" \
  || not_ok "--profile-steps alone (exit $s)" "$err"

echo "1..$n"
[ $failed -eq 0 ]
