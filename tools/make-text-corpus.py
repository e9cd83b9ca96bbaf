#!/usr/bin/env python3
"""make-text-corpus.py — a real text-classification corpus from this machine's
manual pages, for the text benchmarks and examples (text:FILE.csv).

Each row is one page of /usr/share/man/manN (English only): its roff source
with comments, macros and escapes stripped, the title line (.TH, which names
the section) dropped, the SEE ALSO section dropped and every "name(N)"
cross-reference reduced to "name" (they would give the section away), cut to
the first --words words. The label is the page's section:

  commands (1), system-calls (2), library-calls (3), overviews (7), admin (8)

Pages that only include another (.so) or have fewer than 20 words are
skipped, and so are the Google Cloud SDK's generated gcloud pages (16,000 of
them, all alike). Each class gets the same number of rows: --per-class, or as many as
the smallest section has, picked evenly over the sorted file names, so the
output is the same for the same pages. Rows are shuffled with a fixed seed.

  tools/make-text-corpus.py OUT.csv [--per-class N] [--words W] [--man DIR]

Writes a CSV with the header "text,label" and prints the classes and counts.
"""
import argparse
import csv
import gzip
import os
import random
import re
import sys

SECTIONS = [("1", "commands"), ("2", "system-calls"), ("3", "library-calls"), ("7", "overviews"), ("8", "admin")]

ESCAPES = [
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""),   # font changes
    (re.compile(r"\\s[+-]?\d"), ""),                # size changes
    (re.compile(r"\\\*\(..|\\\*\[[^\]]*\]|\\\*."), ""),  # strings
    (re.compile(r"\\\(em|\\\(en"), " - "),
    (re.compile(r"\\\(..|\\\[[^\]]*\]"), " "),      # special characters
    (re.compile(r"\\[-e]"), lambda m: "-" if m.group(0) == "\\-" else "\\"),
    (re.compile(r"\\[&|^%:c!0~ ,/]"), " "),
    (re.compile(r"\\\".*$"), ""),                   # trailing comments
]
XREF = re.compile(r"\b([\w.:+-]+)\s*\(\d[a-z]*\)")


def page_text(path, max_words):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except (OSError, EOFError):
        return None
    words = []
    skip = False
    for line in lines:
        if line.startswith((".so ", "'so ")) and not words:
            return None
        if line.startswith((".\\\"", "'\\\"", ".TH", "'TH", '.\\"')):
            continue
        if line.startswith((".", "'")):
            parts = line[1:].split(None, 1)
            macro = parts[0] if parts else ""
            arg = parts[1] if len(parts) > 1 else ""
            if macro in ("SH", "SS"):
                skip = arg.strip('"').upper().startswith("SEE ALSO")
                if skip:
                    continue
            if macro in ("IP", "TP") and arg:
                arg = re.sub(r"\s+-?\d+(\.\d+)?[mnvipc]?\s*$", "", arg)  # the indent after the tag
            if macro in ("B", "I", "BR", "IR", "RB", "RI", "BI", "IB", "SM", "SB", "SH", "SS", "TP", "IP", "Nm",
                         "Nd", "Ar", "Fl", "Xr", "Pa", "Em", "Sy", "Dq", "Ql", "Va", "Fn", "Fa", "Ft", "Cm"):
                line = arg.replace('"', " ")
            else:
                continue
        if skip:
            continue
        for pattern, repl in ESCAPES:
            line = pattern.sub(repl, line)
        line = XREF.sub(r"\1", line)
        words.extend(line.split())
        if len(words) >= max_words:
            break
    if len(words) < 20:
        return None
    return " ".join(words[:max_words])


def section_pages(man, number, max_words):
    folder = os.path.join(man, "man" + number)
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    # only the plain section (ls.1.gz, read.2.gz), not 3perl, 1ssl and the like
    suffix = re.compile(r"\." + number + r"(\.gz)?$")
    # the Google Cloud SDK's 16,000 generated gcloud pages would be most of section 1
    return folder, [n for n in names if suffix.search(n) and not n.startswith("gcloud")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--per-class", type=int, default=0)
    ap.add_argument("--words", type=int, default=200)
    ap.add_argument("--man", default="/usr/share/man")
    ap.add_argument("--seed", type=int, default=21)
    args = ap.parse_args()

    texts = {}
    for number, label in SECTIONS:
        folder, names = section_pages(args.man, number, args.words)
        pages = []
        for name in names:
            t = page_text(os.path.join(folder, name), args.words)
            if t:
                pages.append(t)
        texts[label] = pages
    n = min(len(p) for p in texts.values())
    if args.per_class:
        n = min(n, args.per_class)
    if n < 10:
        sys.exit("make-text-corpus: too few manual pages in %s (%d in the smallest section)" % (args.man, n))
    rows = []
    for label, pages in texts.items():
        # evenly over the sorted pages, so every letter of the alphabet is there
        step = len(pages) / n
        rows.extend((pages[int(i * step)], label) for i in range(n))
    random.Random(args.seed).shuffle(rows)
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["text", "label"])
        w.writerows(rows)
    print("%s: %d rows, %d classes of %d each (%s); pages found: %s" % (
        args.out, len(rows), len(texts), n, ", ".join(texts),
        ", ".join("%s %d" % (k, len(v)) for k, v in texts.items())))


if __name__ == "__main__":
    main()
