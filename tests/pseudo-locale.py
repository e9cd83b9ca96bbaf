#!/usr/bin/env python3
"""pseudo-locale.py SOURCE_ROOT LOCALEDIR [LANG] — a pseudo-translation of
the GUI: every message of po/POTFILES.in, freshly extracted with xgettext
(a committed .pot could be stale), translated as itself wrapped in "[[" and
"]]", compiled with msgfmt --check into LOCALEDIR/LANG/LC_MESSAGES/netloom.mo
(LANG: xx). Run the GUI with NETLOOM_LOCALEDIR=LOCALEDIR LANGUAGE=xx and a
locale that exists (C.UTF-8): text without the brackets was not marked."""
import os
import subprocess
import sys

# the keywords and format flags of meson's i18n "glib" preset
XGETTEXT_ARGS = [
    "--from-code=UTF-8", "--keyword=_", "--keyword=N_", "--keyword=C_:1c,2", "--keyword=NC_:1c,2",
    "--keyword=ngettext:1,2", "--flag=N_:1:pass-c-format", "--flag=g_strdup_printf:1:c-format",
    "--flag=g_string_append_printf:2:c-format", "--flag=g_set_error:4:c-format",
    "--flag=g_markup_printf_escaped:1:c-format",
]


def read_potfiles(root):
    with open(os.path.join(root, "po", "POTFILES.in"), encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def unquote_join(lines):
    """The raw (still escaped) text of a PO string spread over lines."""
    return "".join(line[line.index('"') + 1:line.rindex('"')] for line in lines)


def parse_pot(text):
    """Entries as dicts of keyword -> raw escaped text (msgctxt, msgid,
    msgid_plural), with their flag lines."""
    entries, cur, key, flags = [], {}, None, []
    for line in text.splitlines() + [""]:
        if not line.strip():
            if "msgid" in cur:
                cur["flags"] = flags
                entries.append(cur)
            cur, key, flags = {}, None, []
        elif line.startswith("#,"):
            flags.append(line)
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            cur[key].append(line)
        else:
            key = line.split(" ", 1)[0]
            cur[key] = [line]
    return [{k: (unquote_join(v) if isinstance(v, list) and k != "flags" else v) for k, v in e.items()}
            for e in entries]


def wrap(raw):
    """[[raw]], keeping a final newline last (msgfmt --check wants it where
    the msgid has it)."""
    if raw.endswith("\\n"):
        return "[[" + raw[:-2] + "]]\\n"
    return "[[" + raw + "]]"


def pseudo_po(entries, lang):
    header = ["Project-Id-Version: netloom", "PO-Revision-Date: 2026-01-01 00:00+0000",
              "Last-Translator: tests/pseudo-locale.py", "Language-Team: none", "Language: " + lang,
              "MIME-Version: 1.0", "Content-Type: text/plain; charset=UTF-8", "Content-Transfer-Encoding: 8bit",
              "Plural-Forms: nplurals=2; plural=(n != 1);"]
    out = ['msgid ""', 'msgstr ""'] + ['"%s\\n"' % h for h in header] + [""]
    for e in entries:
        if e["msgid"] == "":
            continue
        out += [f for f in e["flags"] if "fuzzy" not in f]
        if "msgctxt" in e:
            out.append('msgctxt "%s"' % e["msgctxt"])
        out.append('msgid "%s"' % e["msgid"])
        if "msgid_plural" in e:
            out.append('msgid_plural "%s"' % e["msgid_plural"])
            out.append('msgstr[0] "%s"' % wrap(e["msgid"]))
            out.append('msgstr[1] "%s"' % wrap(e["msgid_plural"]))
        else:
            out.append('msgstr "%s"' % wrap(e["msgid"]))
        out.append("")
    return "\n".join(out)


def main():
    root, localedir = sys.argv[1], sys.argv[2]
    lang = sys.argv[3] if len(sys.argv) > 3 else "xx"
    pot = subprocess.run(["xgettext", "--output=-", "--package-name=netloom"] + XGETTEXT_ARGS +
                         [os.path.join(root, f) for f in read_potfiles(root)],
                         check=True, capture_output=True, text=True).stdout
    entries = parse_pot(pot)
    outdir = os.path.join(localedir, lang, "LC_MESSAGES")
    os.makedirs(outdir, exist_ok=True)
    po = os.path.join(outdir, "netloom.po")
    with open(po, "w", encoding="utf-8") as f:
        f.write(pseudo_po(entries, lang))
    subprocess.run(["msgfmt", "--check", "-o", os.path.join(outdir, "netloom.mo"), po], check=True)
    print("%d messages in %s" % (sum(1 for e in entries if e["msgid"]), outdir))


if __name__ == "__main__":
    main()
