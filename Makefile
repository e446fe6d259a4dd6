# dpkit — set-up, demo, tests, benchmarks and paper reproductions.
# `make demo` and `make test` work from a fresh clone with only Python >= 3.11 and make.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PY     := $(BIN)/python
DPKIT  := $(BIN)/dpkit
OUT    := out

.PHONY: help setup demo test test-fast test-statistical lint bench bench-spark reproduce reproduce-maxgddp \
        reproduce-diffprfs reproduce-dpqt reproduce-xgbka clean

help:
	@echo "make demo       set up a venv in $(VENV) and run the main job on sample_data/"
	@echo "make test       set up and run the whole test suite (with ruff)"
	@echo "make bench      benchmarks (time, memory, utility vs peers) -> bench/out, docs/results.md"
	@echo "make reproduce  rerun every paper experiment -> docs/results.md"

$(STAMP): pyproject.toml
	@test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,bench,spark]'
	@touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	@mkdir -p $(OUT)
	$(DPKIT) taxonomy validate taxonomies/adult.yaml sample_data/adult/train.csv
	$(DPKIT) publish sample_data/adult/train.csv --schema taxonomies/adult.yaml --target income \
	    --epsilon 1 --levels 13 -o $(OUT)/adult.released.csv
	$(DPKIT) generalize sample_data/adult/test.csv --cut $(OUT)/adult.released.report.json \
	    -o $(OUT)/adult.test.generalized.csv
	$(DPKIT) evaluate classify --train $(OUT)/adult.released.csv --test $(OUT)/adult.test.generalized.csv \
	    --target income --schema taxonomies/adult.yaml \
	    --baseline sample_data/adult/train.csv --baseline-test sample_data/adult/test.csv
	@echo "released table: $(OUT)/adult.released.csv; privacy report: $(OUT)/adult.released.report.json"

test: $(STAMP)
	$(BIN)/ruff check dpkit tests bench
	$(PY) -m pytest -q -p no:cacheprovider

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not statistical and not slow and not spark"

test-statistical: $(STAMP)
	$(PY) -m pytest -q -m statistical

lint: $(STAMP)
	$(BIN)/ruff check dpkit tests bench

bench: $(STAMP)
	$(PY) -m bench.run

bench-spark: $(STAMP)
	$(PY) -m bench.bench_spark

reproduce: reproduce-maxgddp reproduce-diffprfs reproduce-dpqt reproduce-xgbka

reproduce-maxgddp: $(STAMP)
	$(DPKIT) evaluate sweep configs/experiments/maxgddp-adult.yaml -o results/maxgddp-adult
	$(DPKIT) evaluate sweep configs/experiments/maxgddp-iris.yaml -o results/maxgddp-iris
	$(PY) scripts/build_results.py

reproduce-diffprfs: $(STAMP)
	$(DPKIT) evaluate sweep configs/experiments/diffprfs-adult.yaml -o results/diffprfs-adult
	$(PY) scripts/build_results.py

reproduce-dpqt: $(STAMP)
	$(DPKIT) evaluate sweep configs/experiments/dpqt.yaml -o results/dpqt
	$(PY) scripts/build_results.py

reproduce-xgbka: $(STAMP)
	$(DPKIT) evaluate sweep configs/experiments/xgbka.yaml -o results/xgbka
	$(PY) -m bench.bench_kanon --experiment results/xgbka
	$(PY) scripts/build_results.py

clean:
	rm -rf $(OUT) results bench/out .pytest_cache .ruff_cache
