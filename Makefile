# Shortcuts for dev.py (which needs only Python): make demo | test | docs | bench
PYTHON ?= python3

.PHONY: demo test docs bench lint clean

demo:
	$(PYTHON) dev.py demo

test:
	$(PYTHON) dev.py test

docs:
	$(PYTHON) dev.py docs

bench:
	$(PYTHON) dev.py bench

lint:
	.venv/bin/python -m pip install -q ruff && .venv/bin/ruff check src xla_ops tests examples benchmarks

clean:
	rm -rf .venv site .pytest_cache
