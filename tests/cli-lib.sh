# cli-lib.sh — shared by the CLI test scripts (sourced): TAP helpers and a
# small MNIST-format dataset whose class c is a bright band at rows 2c, 2c+1.
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
# a failure's detail goes to stderr as well: meson's log of a failed test shows stderr
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; echo "not ok $n - $1" >&2; [ -n "${2:-}" ] && sed 's/^/# /' <<<"$2" | tee /dev/stderr; }

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
