# `make demo` and `make test` bootstrap their own virtual environment (.venv)
# from nothing but Python 3.11 and pip (uv, installed into the venv, resolves the same
# versions several times faster; plain pip is the fallback).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test docs bench lint clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet uv
	$(VENV)/bin/uv pip install --quiet --compile-bytecode --python $(PY) -e '.[dev,notebooks,docs]' \
		|| $(PY) -m pip install --quiet -e '.[dev,notebooks,docs]'
	# the tests' package declaring methods through entry points (tests/usercode/)
	$(VENV)/bin/uv pip install --quiet --python $(PY) -e tests/userpkg \
		|| $(PY) -m pip install --quiet -e tests/userpkg
	$(PY) -m dlsched.models.hare.branch  # compiles the search once (numba caches it)
	$(PY) -m dlsched.models.hare.colgen  # and the R||sum wC pricing
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/dlsched demo

# pytest-xdist with one worker per core plus one (notebook kernels, Dask clusters and solver
# subprocesses leave a worker waiting); `$(PY) -m pytest` alone runs serially.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
test: $(VENV)/.installed
	$(PY) -m pytest -q -n $(TEST_WORKERS)

# the documentation site in site/: the README's tour, the architecture, the errata, the API
# reference and every notebook executed with its pictures; any warning fails the build
# (mkdocs.yml: strict). tests/docs/test_docs_site.py then opens it in headless Chromium.
docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --quiet

bench: $(VENV)/.installed
	$(PY) benchmarks/run.py

LINTED := dlsched tests benchmarks notebooks docs examples

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	$(VENV)/bin/mypy dlsched

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache site .cache
