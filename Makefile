# dpkit — set-up, demo, tests, benchmarks and paper reproductions.
# `make demo` and `make test` work from a fresh clone with only Python >= 3.11 and make.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# What the venv is built from: `lock` (default) installs the exact, hashed versions of
# requirements/*.lock, so `make demo` and `make test` give every machine the same packages;
# `newest` the newest releases pyproject's ranges allow, `lowest` the lowest supported
# (requirements/lowest.lock). CI runs the suite on all three (`make test-newest`, `make test-lowest`).
DEPS   ?= lock
# one stamp per set of extras, so that `make demo` and `make test` both work from a fresh
# clone: the demo installs dpkit and its runtime dependencies only; the test, bench and
# reproduce targets add the dev, bench and spark extras (which include everything the demo
# needs, at the same versions: tests/test_locks.py)
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev
# -qq: pip's errors only (no progress, no notices, no setuptools build warnings), so that
# `make demo` prints dpkit's output and nothing else; a slow or dropped download (pyspark is
# ~400 MB) is retried rather than failing a fresh machine's set-up
PIP_FLAGS := --disable-pip-version-check -qq --retries 10 --timeout 60
PIP    := $(BIN)/python -m pip $(PIP_FLAGS)
PY     := $(BIN)/python
DPKIT  := $(BIN)/dpkit
OUT    := out
# pycanon and anjana (the k-anonymity oracle and peer) pin numpy 2.0 / pandas 2.3: they get a
# venv of their own, with dpkit beside them, that the tests reach through tests/oracles.py
ORACLES := .venv-oracles
STAMP_ORACLES := $(ORACLES)/.installed

# ruff's rules change between its releases: the lint is the lock leg's (its pinned ruff); the
# other legs are about what users install, and run the tests only
LINT = $(BIN)/ruff check dpkit tests bench
ifeq ($(DEPS),lock)
INSTALL_RUN = $(PIP) install --require-hashes -r requirements/run.lock && $(PIP) install --no-deps -e .
INSTALL_DEV = $(PIP) install --require-hashes -r requirements/dev.lock && $(PIP) install --no-deps -e .
else ifeq ($(DEPS),lowest)
INSTALL_RUN = $(PIP) install --require-hashes -r requirements/lowest.lock && $(PIP) install --no-deps -e .
INSTALL_DEV = $(INSTALL_RUN)
LINT = @echo "ruff: the lock leg lints (make test)"
else ifeq ($(DEPS),newest)
INSTALL_RUN = $(PIP) install --upgrade --upgrade-strategy eager -e .
INSTALL_DEV = $(PIP) install --upgrade --upgrade-strategy eager -e '.[dev,bench,spark]'
LINT = @echo "ruff: the lock leg lints (make test)"
else
$(error DEPS is lock, newest or lowest)
endif

.PHONY: help setup demo test test-newest test-lowest test-fast test-statistical test-corpus versions lock oracles \
        fuzz lint bench bench-scale bench-robust bench-spark bench-imbalanced bench-peers bench-peers-frontdoor bench-frontdoor \
        reproduce reproduce-maxgddp reproduce-diffprfs reproduce-dpqt reproduce-xgbka clean

help:
	@echo "make demo       set up a venv in $(VENV) (from requirements/run.lock) and run the main job on sample_data/"
	@echo "make test       set up (requirements/dev.lock) and run the whole test suite (with ruff)"
	@echo "make test-newest  the suite in .venv-newest, on the newest versions pyproject allows"
	@echo "make test-lowest  the suite in .venv-lowest, on the lowest supported versions"
	@echo "make lock       refresh requirements/*.lock (exact versions and hashes) from pyproject.toml"
	@echo "make fuzz       every command on >= 2,000 random messy tables (tests/corpus, long; FUZZ_EXAMPLES per test)"
	@echo "make bench      benchmarks (time, memory, utility vs peers) -> bench/out, docs/results/bench-*.md"
	@echo "make bench-scale  1M/10M rows: each command vs DuckDB -> docs/results/bench-scale.md"
	@echo "make bench-robust  default publish vs --levels 13 on 12 tables -> docs/results/publish-robust.md"
	@echo "make bench-imbalanced  forest and publish on imbalanced targets -> docs/results/imbalanced.md"
	@echo "make bench-frontdoor  no-schema publish vs reviewed draft vs raw on tables as they come -> docs/results/frontdoor.md"
	@echo "make bench-peers  publish vs dpmm's AIM (adult-5pct, ~30 min a run) and MST (4 tables, ~5 min a run) -> docs/results/peers-*.md"
	@echo "make bench-peers-frontdoor  no-schema publish vs dpmm's MST (8 tables, 2-10 min a run) and AIM (zero-heavy, ~30 min), no schema either -> docs/results/peers-frontdoor.md"
	@echo "make reproduce  rerun every paper experiment -> docs/results/paper-*.md and the index docs/results.md"

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV)
	@$(PIP) install --upgrade pip

$(STAMP_RUN): pyproject.toml requirements/run.lock | $(BIN)/python
	@$(INSTALL_RUN)
	@touch $@

$(STAMP_DEV): pyproject.toml requirements/dev.lock | $(BIN)/python
	@$(INSTALL_DEV)
	@touch $@ $(STAMP_RUN)

setup: $(STAMP_DEV)

$(STAMP_ORACLES): pyproject.toml requirements/oracles.lock
	@$(PYTHON) -m venv $(ORACLES)
	@$(ORACLES)/bin/python -m pip $(PIP_FLAGS) install --require-hashes -r requirements/oracles.lock
	@$(ORACLES)/bin/python -m pip $(PIP_FLAGS) install --no-deps -e .
	@touch $@

oracles: $(STAMP_ORACLES)

# every lock from pyproject.toml with uv (installed into the dev venv for this); dev.lock first,
# then run.lock constrained by it, so the demo's packages are the tests' packages
UV := $(BIN)/uv
LOCK_FLAGS := --universal --python-version 3.11 --generate-hashes --quiet --custom-compile-command "make lock"
lock: $(STAMP_DEV)
	@$(PIP) install uv
	$(UV) pip compile pyproject.toml --upgrade --extra dev --extra bench --extra spark $(LOCK_FLAGS) -o requirements/dev.lock
	$(UV) pip compile pyproject.toml --upgrade -c requirements/dev.lock $(LOCK_FLAGS) -o requirements/run.lock
	$(UV) pip compile pyproject.toml --upgrade --extra oracles $(LOCK_FLAGS) -o requirements/oracles.lock
	$(UV) pip compile pyproject.toml --upgrade --extra dev --extra spark --resolution lowest-direct $(LOCK_FLAGS) -o requirements/lowest.lock

# the versions a test run is on, first in its log (CI shows which leg ran on what)
versions: $(STAMP_DEV)
	@$(PY) -c "import importlib.metadata as m, sys; print('python', sys.version.split()[0], *(f'{p} {m.version(p)}' for p in ('numpy', 'pandas', 'pyarrow', 'scikit-learn', 'xgboost-cpu', 'pyspark')), sep=' | ')"

# the recipe lines are silent (@): what `make demo` prints is dpkit's own output
demo: $(STAMP_RUN)
	@mkdir -p $(OUT)
	@$(DPKIT) taxonomy validate taxonomies/adult.yaml sample_data/adult/train.csv
	@$(DPKIT) publish sample_data/adult/train.csv --schema taxonomies/adult.yaml --target income \
	    --epsilon 1 -o $(OUT)/adult.released.csv
	@$(DPKIT) generalize sample_data/adult/test.csv --cut $(OUT)/adult.released.report.json \
	    -o $(OUT)/adult.test.generalized.csv
	@$(DPKIT) evaluate classify --train $(OUT)/adult.released.csv --test $(OUT)/adult.test.generalized.csv \
	    --target income --schema taxonomies/adult.yaml \
	    --baseline sample_data/adult/train.csv --baseline-test sample_data/adult/test.csv
	@$(DPKIT) report $(OUT)/adult.released.report.json -o $(OUT)/adult.card.html

test: $(STAMP_DEV) $(STAMP_ORACLES) versions
	$(LINT)
	DPKIT_DEPS=$(DEPS) DPKIT_ORACLES_PYTHON=$(ORACLES)/bin/python $(PY) -m pytest -q -p no:cacheprovider

# the same suite on other ends of pyproject's ranges, each in a venv of its own
test-newest:
	$(MAKE) test VENV=.venv-newest DEPS=newest

test-lowest:
	$(MAKE) test VENV=.venv-lowest DEPS=lowest

test-fast: $(STAMP_DEV)
	$(PY) -m pytest -q -m "not statistical and not slow and not spark"

test-statistical: $(STAMP_DEV)
	$(PY) -m pytest -q -m statistical

# the corpus of messy tables on its own (a fixed, derandomized handful per test: a few minutes)
test-corpus: $(STAMP_DEV)
	$(PY) -m pytest -q -p no:cacheprovider -m corpus tests/corpus

# the same invariants on many random tables: 8 corpus tests x FUZZ_EXAMPLES (default 300: 2,400
# tables), then the loader and core fuzz tests at the same count; the summary counts clean tables
FUZZ_EXAMPLES ?= 300
fuzz: $(STAMP_DEV)
	DPKIT_CORPUS=fuzz DPKIT_CORPUS_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider -m corpus tests/corpus
	DPKIT_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider tests/fuzz

lint: $(STAMP_DEV)
	$(BIN)/ruff check dpkit tests bench

bench: $(STAMP_DEV)
	$(PY) -m bench.run

# 1M and 10M rows (BENCH_SCALE_ROWS=100000000 for the opt-in 100M run, ~11 GB, deleted after)
bench-scale: $(STAMP_DEV)
	$(PY) -m bench.run scale

bench-robust: $(STAMP_DEV)
	$(PY) -m bench.bench_robust --tune

bench-imbalanced: $(STAMP_DEV)
	$(PY) -m bench.bench_imbalanced --runs 5

bench-frontdoor: $(STAMP_DEV)
	$(PY) -m bench.bench_frontdoor --runs 5

# dpmm pins numpy 1.26 / pandas 2.1 / scikit-learn 1.5 and Python < 3.12: its own venv
PEERS_PYTHON ?= python3.11
.venv-peers/bin/python:
	$(PEERS_PYTHON) -m venv .venv-peers
	.venv-peers/bin/pip install -q dpmm==0.1.9

bench-peers: $(STAMP_DEV) .venv-peers/bin/python
	$(PY) -m bench.bench_peers --runs 1 --tables adult-5pct --models aim
	$(PY) -m bench.bench_peers --runs 2 --models mst

bench-peers-frontdoor: $(STAMP_DEV) .venv-peers/bin/python
	$(PY) -m bench.bench_peers_frontdoor --runs 1 --models mst,aim --aim-tables zero-heavy

bench-spark: $(STAMP_DEV)
	$(PY) -m bench.bench_spark

reproduce: reproduce-maxgddp reproduce-diffprfs reproduce-dpqt reproduce-xgbka

reproduce-maxgddp: $(STAMP_DEV)
	$(DPKIT) evaluate sweep configs/experiments/maxgddp-adult.yaml -o results/maxgddp-adult
	$(DPKIT) evaluate sweep configs/experiments/maxgddp-iris.yaml -o results/maxgddp-iris
	$(PY) scripts/build_results.py

reproduce-diffprfs: $(STAMP_DEV)
	$(DPKIT) evaluate sweep configs/experiments/diffprfs-adult.yaml -o results/diffprfs-adult
	$(PY) scripts/build_results.py

reproduce-dpqt: $(STAMP_DEV)
	$(DPKIT) evaluate sweep configs/experiments/dpqt.yaml -o results/dpqt
	$(PY) scripts/build_results.py

reproduce-xgbka: $(STAMP_DEV) $(STAMP_ORACLES)
	$(DPKIT) evaluate sweep configs/experiments/xgbka.yaml -o results/xgbka
	$(ORACLES)/bin/python -m bench.bench_kanon --generalization results/xgbka
	$(ORACLES)/bin/python -m bench.bench_kanon --experiment results/xgbka
	$(PY) scripts/build_results.py

clean:
	rm -rf $(OUT) results bench/out .pytest_cache .ruff_cache
