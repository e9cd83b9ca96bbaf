# cli-lib.sh — shared by the CLI test scripts (sourced): TAP helpers and a
# small MNIST-format dataset whose class c is a bright band at rows 2c, 2c+1.
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
# a failure's detail goes to stderr as well: meson's log of a failed test shows stderr
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; echo "not ok $n - $1" >&2; [ -n "${2:-}" ] && sed 's/^/# /' <<<"$2" | tee /dev/stderr; }

# cli_project_setup: a temporary folder $tmp, removed at exit, holding a new empty project $P
cli_project_setup() {
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  P="$tmp/p.netloom"
  "$cli" project new "$P" >/dev/null
}

# make_mnist DIR N_TRAIN N_TEST
make_mnist() {
  python3 - "$@" <<'PY'
import os, random, struct, sys
d, n_train, n_test = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d, exist_ok=True)
random.seed(1)
def write(prefix, n):
    labels = [(i * 7 + 3) % 10 for i in range(n)]
    with open(os.path.join(d, prefix + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 28, 28))
        for l in labels:
            f.write(bytes(min(255, random.randrange(60) + (150 if y // 2 == l else 0)) for y in range(28) for x in range(28)))
    with open(os.path.join(d, prefix + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + bytes(labels))
write("train", n_train); write("t10k", n_test)
PY
}

# Debian's Python where there is one: a version manager's shim in front of python3 costs a
# fraction of a second a call, and the scripts call it often (the setup installs python3)
if [ -x /usr/bin/python3 ]; then
  python3() { /usr/bin/python3 "$@"; }
fi

# sql PROJECT QUERY: the query's one value (read-only checks of a project file)
sql() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$@"; }

# run1_points PROJECT: the metric points run 1 left, without the clock's (wall time, speed,
# the system metrics, sampled by time)
run1_points() {
  "$cli" metrics --project "$1" --run 1 --csv | awk -F, 'NR > 1 && $4 != "images_per_s" && $4 != "epoch_seconds" \
    && $4 !~ /^system\// { print $1, $2, $3, $4, $5 }'
}

# Moments of training are pinned by step counts, never by how fast the machine trains: a
# trainer started with NETLOOM_TEST_STOP_AT_STEP=N[,M...] sends itself SIGSTOP once N updates
# are done, its metric writer idle (it holds no write lock on the project while stopped).
# wait_stopped PID...: until every PID is stopped (0), or one has ended (1); the bound of
# 300 s only keeps a broken build from hanging the suite
wait_stopped() {
  local p s all
  for _ in $(seq 3000); do
    all=1
    for p in "$@"; do
      s=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1)
      case "$s" in
        T) ;;
        ""|Z|X) return 1 ;;
        *) all=0 ;;
      esac
    done
    [ $all = 1 ] && return 0
    sleep 0.1
  done
  return 1
}

# rank_pids MPIRUN_PID N: the N ranks mpirun started (its children), once all are there
rank_pids() {
  local r=()
  for _ in $(seq 3000); do
    r=($(pgrep -P "$1" -f netloom-cli))
    [ ${#r[@]} -ge "$2" ] || ! kill -0 "$1" 2>/dev/null && break
    sleep 0.1
  done
  echo "${r[@]}"
}
