# dpkit — set-up, demo, tests, benchmarks and paper reproductions.
# `make demo` and `make test` work from a fresh clone with only Python >= 3.11 and make.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# one stamp per set of extras, so that `make demo` and `make test` both work from a fresh
# clone: the demo installs dpkit and its runtime dependencies only; the test, bench and
# reproduce targets add the dev and bench extras (which include everything the demo needs)
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev
# -qq: pip's errors only (no progress, no notices, no setuptools build warnings), so that
# `make demo` prints dpkit's output and nothing else
PIP    := $(BIN)/python -m pip --disable-pip-version-check -qq
PY     := $(BIN)/python
DPKIT  := $(BIN)/dpkit
OUT    := out

.PHONY: help setup demo test test-fast test-statistical test-corpus fuzz lint bench bench-scale bench-robust bench-spark bench-imbalanced bench-peers bench-peers-frontdoor bench-frontdoor \
        reproduce reproduce-maxgddp reproduce-diffprfs reproduce-dpqt reproduce-xgbka clean

help:
	@echo "make demo       set up a venv in $(VENV) and run the main job on sample_data/"
	@echo "make test       set up and run the whole test suite (with ruff)"
	@echo "make fuzz       every command on >= 2,000 random messy tables (tests/corpus, long; FUZZ_EXAMPLES per test)"
	@echo "make bench      benchmarks (time, memory, utility vs peers) -> bench/out, docs/results.md"
	@echo "make bench-scale  1M/10M rows: each command vs DuckDB -> docs/results/bench-scale.md"
	@echo "make bench-robust  default publish vs --levels 13 on 12 tables -> docs/results/publish-robust.md"
	@echo "make bench-imbalanced  forest and publish on imbalanced targets -> docs/results/imbalanced.md"
	@echo "make bench-frontdoor  no-schema publish vs reviewed draft vs raw on tables as they come (issue 36) -> docs/results/frontdoor.md"
	@echo "make bench-peers  publish vs dpmm's AIM (adult-5pct, ~30 min a run) and MST (4 tables, ~5 min a run) -> docs/results/peers-*.md"
	@echo "make bench-peers-frontdoor  no-schema publish vs dpmm's MST (8 tables, 2-10 min a run) and AIM (zero-heavy, ~30 min), no schema either -> docs/results/peers-frontdoor.md"
	@echo "make reproduce  rerun every paper experiment -> docs/results.md"

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV)
	@$(PIP) install --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	@$(PIP) install -e .
	@touch $@

$(STAMP_DEV): pyproject.toml | $(BIN)/python
	@$(PIP) install -e '.[dev,bench,spark]'
	@touch $@ $(STAMP_RUN)

setup: $(STAMP_DEV)

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

test: $(STAMP_DEV)
	$(BIN)/ruff check dpkit tests bench
	$(PY) -m pytest -q -p no:cacheprovider

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

reproduce-xgbka: $(STAMP_DEV)
	$(DPKIT) evaluate sweep configs/experiments/xgbka.yaml -o results/xgbka
	$(PY) -m bench.bench_kanon --generalization results/xgbka
	$(PY) -m bench.bench_kanon --experiment results/xgbka
	$(PY) scripts/build_results.py

clean:
	rm -rf $(OUT) results bench/out .pytest_cache .ruff_cache
