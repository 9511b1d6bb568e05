# Two commands a new user needs: `make demo` (the main job) and `make test` (the whole suite).
# Each creates .venv on first use and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test lint typecheck unit bench clean

$(BIN)/.installed: pyproject.toml integrations/langchain/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]" -e integrations/langchain
	touch $@

setup: $(BIN)/.installed

demo: setup
	$(BIN)/livescore demo $(ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest $(ARGS)

test: lint typecheck unit

bench: setup
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache
