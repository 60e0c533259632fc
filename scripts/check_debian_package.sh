#!/usr/bin/env bash
# Makes the Debian packages from a finished build (cpack -G DEB: hearth and
# hearth-dev) and checks them as a clean Debian machine would see them:
#   - every package named in Depends exists for this distribution;
#   - unpacked into a fresh root (dpkg -x), every shared library the installed
#     programs and library need is either in the package or comes from a
#     declared dependency (or from a package a declared one depends on, as
#     libopenblas0 brings its pthread variant); in a CUDA build, the CUDA
#     libraries may instead come from a CUDA installation that no Debian
#     package owns (NVIDIA's runfile, Python wheels): they are listed, since a
#     machine installing the .deb must provide them the same way;
#   - the unpacked `hearth --version` and `hearth env` run, and
#     examples/cmake_project builds against the unpacked tree and trains
#     (tests/packaging/consume_installed.sh --prefix).
# Usage: scripts/check_debian_package.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[[ -f "$build/CPackConfig.cmake" ]] || { echo "check_debian_package: $build is not a configured build (no CPackConfig.cmake)" >&2; exit 2; }
# dpkg-deb and readelf come with every Debian build machine; pkg-config may not.
scripts/install_deps.sh pkg-config >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_debian_package: FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$work/debs" >"$work/cpack.log") || { cat "$work/cpack.log"; fail "cpack -G DEB failed"; }
runtime_deb=$(ls "$work"/debs/hearth_*.deb)
dev_deb=$(ls "$work"/debs/hearth-dev_*.deb)
for deb in "$runtime_deb" "$dev_deb"; do
  echo "check_debian_package: $(basename "$deb"): Depends: $(dpkg-deb -f "$deb" Depends)"
done

# ---- the declared dependencies exist --------------------------------------------
depends=$(dpkg-deb -f "$runtime_deb" Depends | tr ',' '\n' | sed 's/(.*)//; s/|.*//; s/ //g' | grep -v '^$')
allowed=()
for p in $depends; do
  installed=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  candidate=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/ *Candidate: //p')
  [[ "$installed" == installed || ( -n "$candidate" && "$candidate" != "(none)" ) ]] ||
    fail "Depends names $p, which is neither installed nor available here"
  allowed+=("$p")
  # What a declared package itself depends on is installed with it.
  for q in $(dpkg-query -W -f='${Depends} ${Pre-Depends}' "$p" 2>/dev/null | tr ',|' '\n\n' | sed 's/(.*)//; s/:any//; s/ //g'); do
    allowed+=("$q")
  done
done

# ---- unpacked into a fresh root, every needed library is accounted for ------------
root=$work/root
dpkg -x "$runtime_deb" "$root"
dpkg -x "$dev_deb" "$root"
mapfile -t elves < <(find "$root" -type f \( -path '*/bin/*' -o -name '*.so*' \))
((${#elves[@]} >= 4)) || fail "expected the library and three programs in the package, found ${#elves[@]} files"
for elf in "${elves[@]}"; do
  for needed in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [[ -n $(find "$root" -name "$needed" -print -quit) ]] && continue
    # (awk reads to the end: leaving early would kill ldconfig with SIGPIPE, which pipefail reports)
    path=$(ldconfig -p | awk -v lib="$needed" '$1 == lib && /x86-64|64bit/ && !found { print $NF; found = 1 }')
    # Else where the binary's own run path points (a CUDA build's toolkit directories).
    if [[ -z "$path" ]]; then
      for dir in $(readelf -d "$elf" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p' | tr ':' ' '); do
        [[ -e "$dir/$needed" ]] && { path=$dir/$needed; break; }
      done
    fi
    [[ -n "$path" ]] || fail "$(basename "$elf") needs $needed, which no installed package provides"
    owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null || dpkg -S "$path" 2>/dev/null ||
            dpkg -S "${path/#\/usr\/lib/\/lib}" 2>/dev/null || true)
    owner=${owner%%:*}
    if [[ -z "$owner" && "$needed" =~ ^lib(cublas|cublasLt|cudnn|nccl|cudart|cuda)[.-] ]]; then
      echo "check_debian_package: $(basename "$elf") needs $needed from the CUDA installation ($path), not a Debian package"
      continue
    fi
    [[ -n "$owner" ]] || fail "$(basename "$elf") needs $needed ($path), which belongs to no package"
    [[ " ${allowed[*]} " == *" $owner "* ]] ||
      fail "$(basename "$elf") needs $needed from $owner, which the package does not declare"
  done
done
echo "check_debian_package: every library the ${#elves[@]} installed binaries need comes from a declared dependency"

# ---- it runs, and a program builds against it ---------------------------------------
version=$("$root/usr/bin/hearth" --version)
[[ "$version" == "hearth $(dpkg-deb -f "$runtime_deb" Version)" ]] || fail "hearth --version says '$version'"
echo "check_debian_package: $version"
"$root/usr/bin/hearth" env | grep -E '^cpu (kernels|oneDNN):'
tests/packaging/consume_installed.sh --prefix "$root/usr" --work "$work/consumer"
echo "check_debian_package: OK"
