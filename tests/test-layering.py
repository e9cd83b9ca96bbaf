#!/usr/bin/env python3
"""test-layering.py CHECK_LAYERING — the layering check can fail.

Runs tools/check-layering on small temporary trees: one that follows the
arrows (it must pass, silently), and one per planted violation (it must
fail, naming the file, the line and the header). Prints TAP.
"""
import os
import subprocess
import sys
import tempfile

# What every tree holds: one header per layer, each including what it may
# (relative and root-relative spellings, a generated header, system headers).
CLEAN = {
    "core/nl-tensor.h": '#include <glib.h>\n',
    "core/cuda/nl-cuda.h": '#include "core/nl-tensor.h"\n',
    "ops/nl-op.h": '#include "core/nl-tensor.h"\n#include "core/cuda/nl-cuda.h"\n',
    "ops/cuda/dense.cu": '#include "nl-cuda-kernel.cuh"\n#include "../nl-op.h"\n',
    "ops/cuda/nl-cuda-kernel.cuh": '#include "ops/nl-op.h"\n',
    "engine/graph/nl-graph.h": '#include "ops/nl-op.h"\n#include "core/nl-tensor.h"\n',
    "engine/data/nl-loader.c": '#include "engine/graph/nl-graph.h"\n#include "nl-loader.h"\n',
    "engine/data/nl-loader.h": '#include "engine/graph/nl-graph.h"\n',
    "engine/session/nl-session.h": '#include "engine/graph/nl-graph.h"\n#include "projects/nl-project.h"\n',
    "projects/nl-project.c": '#include "projects/nl-project.h"\n#include "projects/nl-data-resources.h"\n',
    "projects/nl-project.h": '#include "core/nl-tensor.h"\n#include <sqlite3.h>\n',
    "ui/nl-window.h": '#include <gtk/gtk.h>\n#include <adwaita.h>\n#include "engine/session/nl-session.h"\n'
                      '#include "projects/nl-project.h"\n#include "nl-resources.h"\n',
    "app/main.c": '#include "ui/nl-window.h"\n#include "engine/graph/nl-graph.h"\n#include <adwaita.h>\n',
    "tests/test-x.c": '#include "ui/nl-window.h"\n#include "app/main.c"\n',
    "bench/bench-x.c": '#include "engine/session/nl-session.h"\n',
}

# (file, the line to add at its end, what the report must say)
PLANTED = [
    ("ops/nl-op.h", '#include "engine/graph/nl-graph.h"',
     "ops/nl-op.h:3: 'ops/nl-op.h' may not include 'engine/graph/nl-graph.h' (ops may include: core)"),
    ("core/cuda/nl-cuda.h", '#include "ops/nl-op.h"',
     "core/cuda/nl-cuda.h:2: 'core/cuda/nl-cuda.h' may not include 'ops/nl-op.h' (core may include: only itself)"),
    ("ops/cuda/dense.cu", '#include "../../engine/graph/nl-graph.h"',
     "ops/cuda/dense.cu:3: 'ops/cuda/dense.cu' may not include 'engine/graph/nl-graph.h' (ops may include: core)"),
    ("engine/data/nl-loader.c", '#include "engine/session/nl-session.h"',
     "engine/data/nl-loader.c:3: 'engine/data/nl-loader.c' may not include 'engine/session/nl-session.h' "
     "(engine may include: ops, core)"),
    ("engine/graph/nl-graph.h", '#include "projects/nl-project.h"',
     "engine/graph/nl-graph.h:3: 'engine/graph/nl-graph.h' may not include 'projects/nl-project.h' (engine may include: ops, core)"),
    ("engine/session/nl-session.h", '#include "ui/nl-window.h"',
     "engine/session/nl-session.h:3: 'engine/session/nl-session.h' may not include 'ui/nl-window.h' "
     "(engine/session may include: engine, ops, core, projects)"),
    ("projects/nl-project.h", '#include "ops/nl-op.h"',
     "projects/nl-project.h:3: 'projects/nl-project.h' may not include 'ops/nl-op.h' (projects may include: core)"),
    ("ui/nl-window.h", '#include "app/main.c"',
     "ui/nl-window.h:6: 'ui/nl-window.h' may not include 'app/main.c' "
     "(ui may include: engine/session, engine, ops, core, projects)"),
    ("engine/graph/nl-graph.h", '#include <gtk/gtk.h>',
     "engine/graph/nl-graph.h:3: 'engine/graph/nl-graph.h' may not include <gtk/gtk.h> (GTK and libadwaita belong to ui and app)"),
    ("projects/nl-project.c", '#include <adwaita.h>',
     "projects/nl-project.c:3: 'projects/nl-project.c' may not include <adwaita.h> "
     "(GTK and libadwaita belong to ui and app)"),
    ("ops/nl-op.h", '#include "tests/nl-test-util.h"',
     "ops/nl-op.h:3: 'ops/nl-op.h' may not include 'tests/nl-test-util.h' (ops may include: core)"),
    ("ops/nl-op.h", '#include <engine/graph/nl-graph.h>',
     "ops/nl-op.h:3: 'ops/nl-op.h' may not include 'engine/graph/nl-graph.h' (ops may include: core)"),
]


def make_tree(root, extra=None):
    for rel, text in CLEAN.items():
        if extra and extra[0] == rel:
            text += extra[1] + "\n"
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def run(script, root):
    p = subprocess.run([sys.executable, script, root], capture_output=True, text=True)
    return p.returncode, p.stdout.splitlines()


def main():
    script = sys.argv[1]
    failed = 0
    print("1..%d" % (1 + len(PLANTED)))

    with tempfile.TemporaryDirectory() as root:
        make_tree(root)
        rc, lines = run(script, root)
        ok = rc == 0 and lines == []
        print("%s 1 - a tree that follows the arrows passes" % ("ok" if ok else "not ok"))
        if not ok:
            print("# rc %d, said: %s" % (rc, lines))
            failed += 1

    for i, (rel, line, want) in enumerate(PLANTED, 2):
        with tempfile.TemporaryDirectory() as root:
            make_tree(root, (rel, line))
            rc, lines = run(script, root)
            ok = rc == 1 and lines == [want]
            print("%s %d - planted in %s: %s" % ("ok" if ok else "not ok", i, rel, line))
            if not ok:
                print("# rc %d (want 1); said %s; want [%r]" % (rc, lines, want))
                failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
