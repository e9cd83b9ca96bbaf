#!/bin/bash
# gpu-pack.sh — build here and pack what the GPU machine needs into
# .carry/gpu.tar.xz (ignored by git): the programs, the CUDA backend
# module, the non-CUDA shared libraries they load (the GPU machine has
# CUDA, cuDNN and PyTorch but no apt), the networks, bench scripts and
# Fashion-MNIST. Then, on the device:
#     run(carry=[".carry"], command="bash tools/gpu-check.sh")
#   tools/gpu-pack.sh [BUILD_DIR]      (default build-gpu, release)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-gpu}
[ -d "$build" ] || meson setup "$build" "$src" -Dgui=disabled -Dbuildtype=release
meson configure "$build" | grep -q "cuda.*enabled\|cuda.*auto" || true
ninja -C "$build" ops/libnetloom-cuda.so app/netloom-cli tests/test-cuda tests/test-cuda-runtime tests/test-mixed-train tests/test-train bench/bench-resnet20
stage=$(mktemp -d)
mkdir -p "$stage/gpu/bin" "$stage/gpu/lib" "$stage/gpu/data"
bins="$build/app/netloom-cli $build/tests/test-cuda $build/tests/test-train $build/bench/bench-resnet20"
for t in test-cuda-runtime test-mixed-train; do
  [ -x "$build/tests/$t" ] && bins="$bins $build/tests/$t"
done
cp $bins "$stage/gpu/bin/"
# the CUDA backend, which the programs load on first use (gpu-check.sh
# points NETLOOM_CUDA_MODULE at it)
cp "$build/ops/libnetloom-cuda.so" "$stage/gpu/lib/"
# every library outside glibc and CUDA (which the GPU machine has)
for b in $bins "$build/ops/libnetloom-cuda.so"; do ldd "$b"; done | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
  case "$lib" in
    /usr/local/cuda*|*/libc.so*|*/libm.so*|*/libpthread.so*|*/libdl.so*|*/librt.so*|*/ld-linux*) ;;
    *) cp -L "$lib" "$stage/gpu/lib/" ;;
  esac
done
# Open MPI (relocatable with OPAL_PREFIX) with its plugins and libraries,
# for the data-parallel checks (tools/mpi-staged.sh runs it there)
if [ -x /usr/bin/orterun ] && [ -d /usr/lib/x86_64-linux-gnu/openmpi ]; then
  R=$stage/gpu/ompi
  mkdir -p "$R/usr/bin" "$R/usr/lib/x86_64-linux-gnu" "$R/usr/share" "$R/lib"
  cp -L /usr/bin/orterun /usr/bin/orted "$R/usr/bin/"
  cp -a /usr/lib/x86_64-linux-gnu/openmpi "$R/usr/lib/x86_64-linux-gnu/"
  cp -a /usr/share/openmpi "$R/usr/share/"
  [ -d /usr/lib/x86_64-linux-gnu/pmix2 ] && cp -a /usr/lib/x86_64-linux-gnu/pmix2 "$R/usr/lib/x86_64-linux-gnu/"
  for f in "$R"/usr/bin/* $(find "$R" -name "*.so*" -type f); do ldd "$f" 2>/dev/null; done | awk '/=> \//{print $3}' \
    | sort -u | grep -v "openmpi\|pmix2\|/libc.so\|/libm.so\|ld-linux\|libpthread\|libdl\|librt" | while read -r lib; do
      cp -L "$lib" "$R/lib/"
    done
else
  echo "no Open MPI here: the data-parallel checks will skip"
fi
cp -L /usr/share/datasets/fashion-mnist/*.gz "$stage/gpu/data/" 2>/dev/null || echo "no Fashion-MNIST here: accuracy checks will skip"
mkdir -p "$src/.carry"
tar -C "$stage" -cJf "$src/.carry/gpu.tar.xz" gpu
rm -rf "$stage"
ls -la "$src/.carry/gpu.tar.xz"
