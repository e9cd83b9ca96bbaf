#!/usr/bin/env bash
# test-pseudo-locale.sh NETLOOM TEST_PSEUDO_LOCALE SOURCE_ROOT ARTIFACT_DIR —
# the GUI under a pseudo-locale (tests/pseudo-locale.py: every message
# "[[…]]"): `netloom --screenshot` of each page still works (the PNGs are
# kept in ARTIFACT_DIR for people to look at), and test-pseudo-locale finds
# no shown text without the brackets. Runs under xvfb-run (meson).
set -u
netloom="$1"
walker="$2"
source_root="$3"
artifacts="$4"
source "$(dirname "$0")/cli-lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$artifacts"
export XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" GSETTINGS_BACKEND=memory GSK_RENDERER=cairo
# a locale every system has; LANGUAGE picks the pseudo-locale's catalog
export NETLOOM_LOCALEDIR="$tmp/locale" LANGUAGE=xx LC_ALL=C.UTF-8

echo "1..7"
if log=$(python3 "$source_root/tests/pseudo-locale.py" "$source_root" "$NETLOOM_LOCALEDIR" xx 2>&1); then
  ok "pseudo-locale built: $log"
else
  not_ok "pseudo-locale not built" "$log"
fi

log=$("$netloom" --help 2>&1)
if grep -qF '[[Page to show' <<<"$log"; then ok "--help is translated"; else not_ok "--help is not translated" "$log"; fi

for page in network data training experiments; do
  out="$artifacts/$page.png"
  rm -f "$out"
  if log=$("$netloom" --screenshot "$out" --page "$page" --size 1280x800 2>&1) && [ -s "$out" ]; then
    ok "screenshot of the $page page in the pseudo-locale ($out)"
  else
    not_ok "screenshot of the $page page in the pseudo-locale failed" "$log"
  fi
done

if log=$("$walker" 2>&1); then
  ok "every shown text of the welcome screen and the four pages is translated"
else
  not_ok "text left untranslated (test-pseudo-locale)" "$log"
fi
[ "$failed" -eq 0 ]
