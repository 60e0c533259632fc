#!/usr/bin/env bash
# Source this on a GPU host that runs a hearth build made elsewhere: it unpacks
# the Debian runtime libraries in .deps/*.deb (OpenBLAS, gfortran, gomp) under
# /tmp (never over /) and points the loader at them and at the CUDA libraries
# that the host's Python environment provides (cuDNN, cuBLASLt, NCCL).
#   source scripts/gpu_host_env.sh
deps_root=/tmp/hearth-deps
mkdir -p "$deps_root"
for f in .deps/*.deb; do
  [ -e "$f" ] && dpkg -x "$f" "$deps_root"
done
extra="$deps_root/usr/lib/x86_64-linux-gnu:$deps_root/usr/lib/x86_64-linux-gnu/openblas-pthread:$deps_root/lib/x86_64-linux-gnu"
sp=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.dirname(list(m.__path__)[0]))' 2>/dev/null || true)
if [ -n "$sp" ]; then
  for d in "$sp"/*/lib "$sp"/cu13/lib; do [ -d "$d" ] && extra="$extra:$d"; done
fi
export LD_LIBRARY_PATH="$extra:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
