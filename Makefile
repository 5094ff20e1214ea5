# Ostara: the two set-up commands are `make demo` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help install demo stop status test long lint bench fuzz

help:
	@echo "make demo   install what is missing, start the services and the portal on the virtual rack,"
	@echo "            and build its MDS pair and first SSU (DEMO_BUILD=none: leave them blank)"
	@echo "make stop   stop the demo (its data is kept in .run/demo)"
	@echo "make status show what of the demo is running"
	@echo "make test   install what is missing, run the whole suite on its own services"
	@echo "            (but the long walks on the demo: make long)"
	@echo "make bench  run the benchmarks with the demo as background load; end with a table of the"
	@echo "            figures against the goals (BASE=<commit>: beside that commit's, round for round)"
	@echo "make fuzz   only the fuzz tests (API, forms, specs, names), with many more examples"
	@echo "            (OSTARA_FUZZ_EXAMPLES each, default $(FUZZ_EXAMPLES): about 32 minutes)"
	@echo "make lint   ruff"

install:
	@deploy/install.sh

demo: install
	@DEMO_BUILD=$(DEMO_BUILD) deploy/demo.sh start

stop:
	@deploy/demo.sh stop

status:
	@deploy/demo.sh status

test: install
	@deploy/test.sh -m "not long" $(PYTEST_ARGS)

long: install
	@deploy/test.sh -m long $(PYTEST_ARGS)

lint: install
	.venv/bin/ruff check .

bench: install
	@deploy/bench.sh

FUZZ_EXAMPLES := 1000
fuzz: install
	@OSTARA_FUZZ_EXAMPLES=$${OSTARA_FUZZ_EXAMPLES:-$(FUZZ_EXAMPLES)} deploy/test.sh -m fuzz $(PYTEST_ARGS)
