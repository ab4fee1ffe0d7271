# The two set-up commands of a fresh machine: `make demo` and `make test`.
# Each creates .venv when it is missing and installs what it needs into it.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
OUT    ?= accelperf-report

.PHONY: demo test bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Stamp files: reinstall only when the package metadata changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# One pip run for the package and its test extras (it includes what .installed stands for):
# two runs resolved and built the package twice, 38 s against 30 s on a fresh clone.
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/accelperf demo --out $(OUT)

# On every core (pytest-xdist; CI has 2). `--dist load` is taken over by tests/conftest.py's
# scheduler: each long test (and each docs page) is a work unit, every other file one unit
# (its module fixtures stay on one worker), the units sent longest first so that no worker
# idles at the end. (--dist loadfile alone left tests/test_docs.py on one worker; loadgroup
# is ignored by pytest 9: xdist 3.8 groups by a node-id suffix pytest no longer reads.)
PYTEST_WORKERS ?= auto
test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist load

# The documentation site (docs/, mkdocs.yml) into site/; any warning is an error.
docs: $(VENV)/.installed-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

bench: $(VENV)/.installed
	@for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) $(OUT) site build src/*.egg-info .pytest_cache .hypothesis
