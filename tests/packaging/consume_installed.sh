#!/usr/bin/env bash
# Uses hearth as a program outside the tree would: from an install prefix (or,
# with --prefix, from one already populated, such as an unpacked .deb).
#   consume_installed.sh --build BUILD_DIR --work WORK_DIR    installs BUILD_DIR into WORK_DIR/prefix first
#   consume_installed.sh --prefix PREFIX --work WORK_DIR      uses PREFIX as it is
# Checks, failing on the first problem:
#   - the installed headers are the public ones, and the CMake package and
#     hearth.pc name nothing of the build tree or of hearth's private dependencies;
#   - every installed header compiles, all in one program, under
#     -Wall -Wextra -Werror -pedantic with only the prefix on the include path;
#   - examples/cmake_project builds with find_package(hearth 0.1) and both
#     programs train for a few steps; a pkg-config build links and runs too.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
build="" prefix="" work=""
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "consume_installed: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$work" && ( -n "$build" || -n "$prefix" ) ]] || { echo "usage: $0 (--build DIR | --prefix DIR) --work DIR" >&2; exit 2; }
fail() { echo "consume_installed: FAIL: $*" >&2; exit 1; }

rm -rf "$work" && mkdir -p "$work"
work=$(cd "$work" && pwd)
if [[ -n "$build" ]]; then
  prefix=$work/prefix
  cmake --install "$build" --prefix "$prefix" >"$work/install.log"
fi
prefix=$(cd "$prefix" && pwd)
echo "consume_installed: prefix $prefix"

# ---- what is installed --------------------------------------------------------
libdir=$(dirname "$(find "$prefix" -name 'libhearth.so.*.*.*' | head -1)")
[[ -d "$libdir" ]] || fail "no libhearth.so.X.Y.Z under $prefix"
lib=$(ls "$libdir"/libhearth.so.*.*.*)
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ "$soname" =~ ^libhearth\.so\.[0-9]+\.[0-9]+$ ]] || fail "SONAME of $lib is '$soname', expected libhearth.so.MAJOR.MINOR"
[[ -e "$libdir/$soname" ]] || fail "$libdir/$soname (the SONAME link) is missing"
[[ -x "$prefix/bin/hearth" ]] || fail "$prefix/bin/hearth is missing"
for example in cv_example run_glue; do [[ -x "$prefix/bin/$example" ]] || fail "$prefix/bin/$example is missing"; done
headers=$prefix/include/hearth
[[ -f "$headers/core/tensor.h" && -f "$headers/train/trainer.h" && -f "$headers/version.h" ]] ||
  fail "public headers missing under $headers"
private=$(cd "$headers" && find . \( -path './backends*' -o -path '*/gloo*' -o -name '*_passes.h' \) -print)
[[ -z "$private" ]] || fail "private headers installed: $private"
# No installed header may include one that is not installed, or a private dependency's.
missing=$(cd "$prefix/include" && grep -rhoE '#include "hearth/[^"]+"' hearth | sed 's/#include "\(.*\)"/\1/' | sort -u |
          while read -r h; do [[ -f "$h" ]] || echo "$h"; done)
[[ -z "$missing" ]] || fail "installed headers include headers that are not installed: $missing"
if grep -rlE '#include <(CLI/|utf8proc|jpeglib|png\.h|zlib\.h|cblas|omp\.h|gloo/|oneapi/|dnnl|cuda|cudnn|cublas|nccl|pcre2)' "$headers"; then
  fail "installed headers include a private dependency's header"
fi
cmake_dir=$(dirname "$(find "$prefix" -name hearthConfig.cmake | head -1)")
[[ -f "$cmake_dir/hearthTargets.cmake" ]] || fail "no CMake package under $prefix"
leaks=$(grep -hiE 'CLI11|utf8proc|jpeg|png|openblas|gloo|dnnl|cudart|cublas|cudnn|nccl|pcre2|OpenMP' "$cmake_dir"/hearthTargets*.cmake || true)
[[ -z "$leaks" ]] || fail "the CMake package passes private dependencies on to programs: $leaks"
if [[ -n "$build" ]]; then
  build_abs=$(cd "$build" && pwd)
  if grep -rl "$build_abs\|$source_dir" "$cmake_dir" "$libdir/pkgconfig"; then fail "the package names the build or source tree"; fi
fi

# ---- the package's version and components ------------------------------------------
# find_package(hearth 0.1) finds it, 0.2 and 1.0 do not (0.x minors may break
# the API); COMPONENTS CUDA is found exactly when the library has the backend.
mkdir -p "$work/find"
cat >"$work/find/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(find_hearth LANGUAGES CXX)
find_package(hearth ${WANT} CONFIG QUIET COMPONENTS ${COMPONENTS})
message(STATUS "found=${hearth_FOUND} cuda=${hearth_CUDA_FOUND}")
CMAKE
find_hearth() { cmake -S "$work/find" -B "$work/find/build-$1-$2" -DCMAKE_PREFIX_PATH="$prefix" -DWANT="$1" -DCOMPONENTS="$2" |
                sed -n 's/^-- found=\(.*\) cuda=\(.*\)/\1 \2/p'; }
read -r found cuda < <(find_hearth 0.1 "")
[[ "$found" == 1 ]] || fail "find_package(hearth 0.1) did not find the package"
for other in 0.2 1.0; do
  read -r found _ < <(find_hearth "$other" "")
  [[ "$found" == 0 ]] || fail "find_package(hearth $other) accepted version $(sed -n 's/#define HEARTH_VERSION "\(.*\)"/\1/p' "$headers/version.h")"
done
read -r found_cuda _ < <(find_hearth 0.1 CUDA)
if [[ "$cuda" == ON ]]; then want=1; else want=0; fi
[[ "$found_cuda" == "$want" ]] || fail "COMPONENTS CUDA found=$found_cuda, but hearth_CUDA_FOUND is $cuda"
echo "consume_installed: find_package(hearth 0.1) works, 0.2 and 1.0 refused; CUDA component: $cuda"

# ---- every header, strictly, in one program -------------------------------------
mkdir -p "$work/all_headers"
(cd "$prefix/include" && find hearth -name '*.h' | sort | sed 's/.*/#include "&"/') >"$work/all_headers/all_headers.cpp"
echo 'int main() { return 0; }' >>"$work/all_headers/all_headers.cpp"
cat >"$work/all_headers/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(all_headers LANGUAGES CXX)
find_package(hearth 0.1 CONFIG REQUIRED)
add_executable(all_headers all_headers.cpp)
target_compile_features(all_headers PRIVATE cxx_std_20)
target_compile_options(all_headers PRIVATE -Wall -Wextra -Werror -pedantic)
target_link_libraries(all_headers PRIVATE hearth::hearth)
CMAKE
cmake -S "$work/all_headers" -B "$work/all_headers/build" -DCMAKE_PREFIX_PATH="$prefix" >"$work/all_headers.log"
cmake --build "$work/all_headers/build" >>"$work/all_headers.log" 2>&1 || { cat "$work/all_headers.log"; fail "the installed headers do not compile strictly"; }
echo "consume_installed: $(grep -c include "$work/all_headers/all_headers.cpp") headers compile under -Wall -Wextra -Werror -pedantic"

# ---- the example project ----------------------------------------------------------
cp -r "$source_dir/examples/cmake_project" "$work/cmake_project"
cmake -S "$work/cmake_project" -B "$work/cmake_project/build" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake_project.log"
cmake --build "$work/cmake_project/build" >>"$work/cmake_project.log" 2>&1 || { cat "$work/cmake_project.log"; fail "examples/cmake_project does not build"; }
# Nothing of the library's private dependencies on the program's command lines
# (the install's own paths taken out first: a checkout may sit in a folder
# whose name contains one of these words).
if cat "$work/cmake_project/build/CMakeFiles"/*/flags.make "$work/cmake_project/build/CMakeFiles"/*/link.txt |
   sed -e "s|$prefix||g" -e "s|$work||g" | grep -E '(utf8proc|CLI11|jpeg|dnnl|cuda)'; then
  fail "a private dependency of hearth reached the program's compile or link line"
fi
cd "$work"
for program in fashion_mnist_trainer fashion_mnist_loop; do
  out=$(OMP_WAIT_POLICY=passive "$work/cmake_project/build/$program" 20 500 2>&1) || { echo "$out"; fail "$program failed"; }
  grep -q "^test accuracy: 0\.[0-9]" <<<"$out" || { echo "$out"; fail "$program printed no test accuracy"; }
  echo "consume_installed: $program: $(grep '^test accuracy' <<<"$out")"
done

# ---- pkg-config ---------------------------------------------------------------------
if command -v pkg-config >/dev/null; then
  export PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  [[ $(pkg-config --modversion hearth) == "$(sed -n 's/#define HEARTH_VERSION "\(.*\)"/\1/p' "$headers/version.h")" ]] ||
    fail "pkg-config's version of hearth differs from version.h"
  printf '#include "hearth/version.h"\n#include "hearth/ops/factory.h"\n#include <cstdio>\nint main() { std::printf("%%s %%g\\n", HEARTH_VERSION, hearth::ones({2, 3}).sum().item<double>()); }\n' >"$work/pc.cpp"
  # shellcheck disable=SC2046
  c++ -Wall -Wextra -Werror -pedantic "$work/pc.cpp" -o "$work/pc" $(pkg-config --cflags --libs hearth)
  [[ $("$work/pc") == *" 6" ]] || fail "the pkg-config program printed $("$work/pc")"
  echo "consume_installed: pkg-config build runs"
else
  echo "consume_installed: pkg-config not installed: skipped its check"
fi
echo "consume_installed: OK"
