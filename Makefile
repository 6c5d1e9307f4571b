# Two commands do everything on a fresh machine (README.md):
#   make quickstart   # set up .venv (torch + build deps), build gpuprim, run examples/quickstart.py
#   make test         # same set-up, then the test suite (GPU tests run when a GPU is present)
# Other targets: build, cpp-example, lint, format, clean. PYTHON picks the interpreter that creates .venv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_SPEC ?= torch
export TORCH_CUDA_ARCH_LIST ?= 8.0;9.0;10.0+PTX
export MAX_JOBS ?= $(shell nproc)

.PHONY: quickstart test build cpp-example lint format clean

quickstart: build
	$(PY) examples/quickstart.py

test: build
	$(PY) -m pytest tests

build: $(VENV)/.deps
	$(PY) -m pip install --no-build-isolation --no-deps -e . -q

$(VENV)/.deps: requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH_SPEC)" -r requirements-dev.txt
	touch $@

# The LibTorch example: install the CMake package, build examples/cpp against it, run it.
cpp-example: build
	bash examples/cpp/build_and_run.sh $(PY)

# Style (pyproject.toml configures ruff and mypy; .clang-format the C++). lint changes nothing; format rewrites
# Python imports and other fixable findings. C++ is not part of lint until csrc has been formatted once:
# `make format CXX_FORMAT=1` runs clang-format -i over csrc.
CLANG_FORMAT ?= clang-format
CXX_SOURCES = $(shell git ls-files 'csrc/*.h' 'csrc/*.cpp' 'csrc/*.cu' 'csrc/*.cuh')

lint: $(VENV)/.deps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

format: $(VENV)/.deps
	$(VENV)/bin/ruff check --fix .
ifdef CXX_FORMAT
	$(CLANG_FORMAT) -i $(CXX_SOURCES)
endif

clean:
	rm -rf build torch_ops/gpuprim/lib examples/cpp/build
