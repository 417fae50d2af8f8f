# Set-up and checks. `make demo` and `make test` work on a fresh machine with only Python 3.10+.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# ORACLE=1 also installs PyTorch 2.13.0 (CPU) so the PyTorch-oracle tests run instead of skipping.
ORACLE ?= 0

.PHONY: demo test docs bench lint clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,docs,examples]"
	@if [ "$(ORACLE)" = "1" ]; then $(PY) -m pip install -q torch==2.13.0; fi
	touch $@

demo: $(VENV)/.installed
	$(PY) examples/quickstart.py

test: $(VENV)/.installed
	@if [ "$(ORACLE)" = "1" ]; then $(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q torch==2.13.0; fi
	$(PY) -m pytest -q -p no:cacheprovider tests

docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict -q

bench: $(VENV)/.installed
	$(PY) benchmarks/run_all.py

lint: $(VENV)/.installed
	$(PY) -m pip install -q ruff && $(VENV)/bin/ruff check src xla_ops tests examples benchmarks

clean:
	rm -rf $(VENV) site .pytest_cache
