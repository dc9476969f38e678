# One entry point for newcomers and CI. `make demo` and `make test` create the
# virtual environment themselves.
#
# TORCH_SPEC picks the torch that setup installs first. The default is the CPU
# build 2.13.0, which this project's CPU machines have on disk; on a GPU
# machine use e.g. `make setup TORCH_SPEC=torch` (pip's default CUDA build; a
# TORCH_SPEC other than the one .venv was made with recreates .venv), or install
# into an environment that already has torch: pyproject asks only for torch>=2.4.
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_SPEC ?= torch==2.13.0
# The extras installed with the package. The default (CPU) torch also gets `cpu`:
# Triton >= 3.7, whose interpreter runs every kernel on CPU tensors (3.6's fails
# looped and split reductions). Another TORCH_SPEC keeps the Triton its torch pins.
comma := ,
EXTRAS ?= $(if $(filter torch==2.13.0,$(TORCH_SPEC)),test$(comma)cpu,test)
# One stamp per (TORCH_SPEC, EXTRAS): after `make demo`, `make setup TORCH_SPEC=torch`
# is a new target, and the recipe recreates a .venv that it made with another
# TORCH_SPEC (recorded in .venv/.torch-spec; an environment it did not make is never removed).
SPEC_ID := $(shell printf '%s' '$(TORCH_SPEC) $(EXTRAS)' | cksum | cut -d' ' -f1)
STAMP := $(VENV)/.installed-$(SPEC_ID)

.PHONY: setup demo test lit pytest lint clean mlir-tools

$(STAMP): pyproject.toml
	@old=$$(cat $(VENV)/.torch-spec 2>/dev/null || { [ -e $(VENV)/.installed ] && echo 'torch==2.13.0'; }); \
	if [ -n "$$old" ] && [ "$$old" != '$(TORCH_SPEC)' ]; then \
	  echo "TORCH_SPEC changed ('$$old' -> '$(TORCH_SPEC)'): recreating $(VENV)"; \
	  rm -rf $(VENV); \
	fi
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q '$(TORCH_SPEC)'
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	printf '%s\n' '$(TORCH_SPEC)' > $(VENV)/.torch-spec
	rm -f $(VENV)/.installed $(VENV)/.installed-*
	touch $@

setup: $(STAMP)

# The whole pipeline on one example: the text IR after segmenting and allocation,
# then the generated host program with its Triton kernels, compiled and run on
# random inputs (on the GPU if there is one, else on the CPU through Triton's
# interpreter) and checked against the reference evaluator.
demo: setup
	$(VENV)/bin/allot-opt examples/rmsnorm.mlir -p fusion-segment,fusion-allocate
	$(VENV)/bin/allot-run examples/rmsnorm.mlir --shapes x=8x64 --dump --check

# The MLIR 22 tools (mlir-opt, mlir-runner) for `alloc-to-mlir`'s tests (docs/mlir.md):
# found on PATH or in /usr/lib/llvm-22/bin, else installed with apt-get when root. Never
# fails: without root or a package registry it warns, and those tests are skipped.
mlir-tools:
	@if command -v mlir-opt >/dev/null 2>&1 || [ -x /usr/lib/llvm-22/bin/mlir-opt ]; then \
		echo "mlir-tools: mlir-opt found"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		(apt-get install -y -q mlir-22-tools >/dev/null 2>&1 || \
		 (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q mlir-22-tools >/dev/null 2>&1)) \
		&& echo "mlir-tools: installed mlir-22-tools" \
		|| echo "mlir-tools: warning: could not install mlir-22-tools; the MLIR tests will be skipped"; \
	else \
		echo "mlir-tools: warning: mlir-opt not found and not root; run 'apt-get install -y mlir-22-tools' as root, or the MLIR tests are skipped"; \
	fi

# -s prints a summary with the pass count, -v the output of each failing test.
lit: setup
	$(VENV)/bin/lit -sv tests/filecheck

# pytest closes with "N passed in ...", the line CI reads.
pytest: setup
	$(VENV)/bin/pytest tests

lint: setup
	$(VENV)/bin/ruff check allotment tests benchmarks

# lint last: a style finding does not hide test results.
test: mlir-tools lit pytest lint

clean:
	rm -rf $(VENV) build *.egg-info
