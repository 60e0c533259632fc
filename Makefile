# The user's entry points. CMake does the building; this file only strings the
# steps together so that one command works on a fresh Debian machine.
#
#   make test              install missing packages, configure, build, run every test
#   make test CUDA=OFF     the same, CPU only even where the CUDA toolkit is installed
#   make build             install missing packages, configure, build
#   make asan              the unit tests under AddressSanitizer + UBSan (build-asan/)
#   make clean             remove the build directories
#
# Variables: CUDA (AUTO|ON|OFF), PRESET (a configure preset from
# CMakePresets.json, default release), BUILD_DIR (default build), JOBS (default:
# all cores), CMAKE_ARGS (extra -D options for the configure step).

SHELL := /bin/bash
.DEFAULT_GOAL := build

CUDA       ?= AUTO
PRESET     ?= release
BUILD_DIR  ?= build
ASAN_DIR   ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

# Leak checking needs ptrace-like access to the process; .ci/run probes for it
# and overrides this where the container forbids it.
ASAN_OPTIONS  ?= detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1
UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS UBSAN_OPTIONS

.PHONY: deps configure build test asan asan-build clean

deps:
	scripts/install_deps.sh

configure: deps
	cmake --preset $(PRESET) -B $(BUILD_DIR) -DHEARTH_CUDA=$(CUDA) $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

asan-build: deps
	cmake --preset asan -B $(ASAN_DIR) $(CMAKE_ARGS)
	cmake --build $(ASAN_DIR) -j $(JOBS) --target hearth_unit_tests

asan: asan-build
	cd $(ASAN_DIR) && ctest --output-on-failure -j $(JOBS) -L unit

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
