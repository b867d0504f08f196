# Makefile - the two commands of the README, and a few conveniences.
#   make demo   install what is missing, build, run the main job on an embedded default
#   make docs   the man page's OPTIONS section from the option tables
#               (vramfit help --man into docs/vramfit.1) and the report
#               screenshots in docs/ (tests/cli/report.sh in headless Chromium)
#   make test   install what is missing, build, run the whole suite
#               (unit + CLI tests, both again under ASan+UBSan without
#                the example trainer's, the browser's and gpu-proof's
#                cases, then every fuzz target for a bounded time, JOBS
#                at once; fails when a test changed or left a file in the
#                checkout)
#   make bench  every bench/bench-*.c and bench/*.sh; the figures come as
#               ratios to `python3 -c pass` timed in the same run (and to
#               llm-analysis's CLI with LLM_ANALYSIS_DIR=checkout), and in ms
#   make gpu-proof  scripts/gpu-proof.sh: every GPU path on this machine's GPU
#               (skipped with the reason where there is none) + the CPU parts
JOBS      ?= 2
FUZZ_SECS ?= 20
CMAKE_Q    = cmake -S . -Wno-dev

.PHONY: all shared-check deps test-deps build build-asan build-fuzz test unit fuzz demo bench docs gpu-proof clean

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

build: deps
	@$(CMAKE_Q) -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build build -j$(JOBS)

build-asan: deps
	@$(CMAKE_Q) -B build-asan -DCMAKE_BUILD_TYPE=Debug -DVF_SANITIZE=ON >/dev/null
	@cmake --build build-asan -j$(JOBS)

build-fuzz: deps
	@CC=clang $(CMAKE_Q) -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DVF_FUZZ=ON >/dev/null
	@cmake --build build-fuzz -j$(JOBS)

unit: build
	@ctest --test-dir build --output-on-failure -j$(JOBS)

SHARED_DIR = $(or $(VF_SHARED_DIR),../shared)

shared-check:
	@test -d "$(SHARED_DIR)/fixtures" || { echo "make test: $(SHARED_DIR)/fixtures not found: the tests need the shared fixtures next to the repo (or VF_SHARED_DIR=/path/to/shared make test)" >&2; exit 1; }

test: shared-check test-deps build build-asan build-fuzz
	@scripts/checkout-state.sh save build/checkout-state.before
	@echo "== tests (release build)"
	@ctest --test-dir build --output-on-failure -j$(JOBS)
	@echo "== unit and end-to-end tests under ASan+UBSan"
	@ctest --test-dir build-asan --output-on-failure -j$(JOBS)
	@echo "== fuzz targets ($(FUZZ_SECS) s each)"
	@JOBS=$(JOBS) scripts/run-fuzz.sh build-fuzz $(FUZZ_SECS)
	@echo "== the checkout after the suite"
	@scripts/checkout-state.sh check build/checkout-state.before

fuzz: build-fuzz
	@JOBS=$(JOBS) scripts/run-fuzz.sh build-fuzz $(FUZZ_SECS)

demo: build
	@scripts/demo.sh build/vramfit

bench: build
	@set -e; for b in build/bench/bench-*; do echo "== $$b"; "$$b"; done
	@set -e; for b in bench/*.sh; do echo "== $$b"; bash "$$b" build/vramfit; done

# The README's report screenshots: the report test writes its 1280x800 shots there.
docs: shared-check test-deps build
	@scripts/man-options.sh build/vramfit docs/vramfit.1
	@VF_DOCS_DIR=$(CURDIR)/docs VRAMFIT=$(CURDIR)/build/vramfit VF_SHARED_DIR=$(abspath $(SHARED_DIR)) \
	  bash tests/cli/report.sh
	@ls -l docs/report-*.png

# OUT_DIR and --budget: GPU_PROOF_OUT=dir GPU_PROOF_BUDGET=seconds (default
# build-release/gpu-proof, 420 s). On a machine without network (a lent GPU
# machine) run scripts/gpu-proof.sh directly: this target installs packages.
gpu-proof: test-deps
	@scripts/gpu-proof.sh $(GPU_PROOF_OUT) $(if $(GPU_PROOF_BUDGET),--budget $(GPU_PROOF_BUDGET))

clean:
	rm -rf build build-asan build-fuzz build-release
