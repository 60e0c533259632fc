#!/usr/bin/env bash
# Builds hearth on a GPU host that has the CUDA toolkit but none of the Debian
# development packages: they come as .deb files in .deps/build/ (unpacked under
# /tmp, never over /), cuDNN from the host's Python environment. The sources come
# from .deps/src.tar.gz when present (git archive of a commit), else from the
# working tree the script runs in. The unpacked packages' headers come before
# the host's (its libjpeg headers are another version than the library we
# unpack). Then it
# runs the GPU tests and the unit tests, or the command given as arguments.
# Logs go to $LOG_DIR; HEARTH_CMAKE_ARGS and EXTRA_CXX_FLAGS add configure options,
# and HEARTH_BUILD_TARGETS (space-separated) builds only those targets.
set -u
LOG_DIR=${LOG_DIR:-/tmp/hearth-logs}
mkdir -p "$LOG_DIR"
SP=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.dirname(list(m.__path__)[0]))')
mkdir -p /tmp/d /tmp/links /tmp/src
for f in .deps/build/*.deb; do dpkg -x "$f" /tmp/d; done
# Packages repacked without what the build does not use (static archives), to travel light.
for f in .deps/build/*.tar.xz; do [ -e "$f" ] && tar -xJf "$f" -C /tmp/d; done
ln -sf "$SP/cudnn/lib/libcudnn.so.9" /tmp/links/libcudnn.so
if [ -f .deps/src.tar.gz ]; then
  tar -xzf .deps/src.tar.gz -C /tmp/src
else
  tar -cf - --exclude='./build*' --exclude=./.deps --exclude=./.git . | tar -xf - -C /tmp/src
fi
cd /tmp/src && rm -rf build
export LD_LIBRARY_PATH=/tmp/d/usr/lib/x86_64-linux-gnu/openblas-pthread:/tmp/d/usr/lib/x86_64-linux-gnu:$SP/cudnn/lib:$SP/nccl/lib:$SP/cu13/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_CUDA=ON \
  -DCMAKE_PREFIX_PATH=/tmp/d/usr \
  "-DCMAKE_LIBRARY_PATH=/tmp/d/usr/lib/x86_64-linux-gnu/openblas-pthread;/tmp/d/usr/lib/x86_64-linux-gnu;/tmp/links" \
  -DCBLAS_INCLUDE_DIR=/tmp/d/usr/include/x86_64-linux-gnu/openblas-pthread \
  -DCUDNN_LIBRARY=/tmp/links/libcudnn.so -DZLIB_LIBRARY=/usr/lib/x86_64-linux-gnu/libz.so.1 -DZLIB_LIBRARY_RELEASE=/usr/lib/x86_64-linux-gnu/libz.so.1 -DZLIB_INCLUDE_DIR=/tmp/d/usr/include \
  -DJPEG_INCLUDE_DIR=/tmp/d/usr/include \
  "-DCMAKE_CXX_FLAGS=-I$SP/cudnn/include -I/tmp/d/usr/include/x86_64-linux-gnu ${EXTRA_CXX_FLAGS:-}" "-DCMAKE_CUDA_FLAGS=-I$SP/cudnn/include" ${HEARTH_CMAKE_ARGS:-} > $LOG_DIR/configure.log 2>&1 || { tail -40 $LOG_DIR/configure.log; exit 1; }
start=$SECONDS
cmake --build build -j16 ${HEARTH_BUILD_TARGETS:+--target $HEARTH_BUILD_TARGETS} > $LOG_DIR/build.log 2>&1 || { grep -E "error|Error" -A5 $LOG_DIR/build.log | head -60; exit 1; }
echo "build took $((SECONDS - start)) s"
# With arguments: run them from the source root after the build (e.g. a
# benchmark); without: the GPU tests and the unit tests.
if [ $# -gt 0 ]; then
  "$@"
  exit $?
fi
./build/bin/hearth env
./build/bin/hearth ops > "$LOG_DIR/ops.txt"
./build/bin/hearth_gpu_tests 2>&1 | tee "$LOG_DIR/gpu_tests.log" | tail -150
./build/bin/hearth_unit_tests --gtest_brief=1 2>&1 | tail -5
