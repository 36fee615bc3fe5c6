# The two entry points of README.md: `make run` and `make test`. Both bootstrap first.
BUILD_DIR ?= build
CMAKE_FLAGS ?=
RUN_ARGS ?=
# ccache keys on paths relative to the checkout, so a fresh clone (CI) reuses earlier builds.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true
# The units that share LibTorch's precompiled header (cmake/torch_pch.cmake) are cached only with
# these; CMake's ccache launcher sets the same value for builds that do not go through make.
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime

.PHONY: all bootstrap configure build test test-timing run clean
all: build

bootstrap:
	@BUILD_DIR=$(abspath $(BUILD_DIR)) scripts/bootstrap

configure: bootstrap
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_PREFIX_PATH="$$(cat $(BUILD_DIR)/.torch-prefix)" $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR)

# Every test but those labelled `timing`, which compare times measured now and so hold only on a
# machine that runs nothing else (docs/build.md, "Timing checks"): `make test-timing` runs them.
test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure --timeout 900 -j2 -LE timing

test-timing: build
	@cd $(BUILD_DIR) && ctest --output-on-failure --timeout 1200 -L timing

# The run needs the program (and the Python executors' memory probe beside it), not the tests:
# 109 of the build's 154 objects, 73 of its 98 that compile LibTorch's headers.
run: configure
	@cmake --build $(BUILD_DIR) --target tokbench tokbench_memory_probe
	@$(BUILD_DIR)/bin/tokbench run $(RUN_ARGS)

clean:
	rm -rf $(BUILD_DIR)
