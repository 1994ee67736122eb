# vaultask — run `make help` for the targets. Each target is a script in
# scripts/, so a machine without make runs the same thing with bash.
SHELL := /bin/bash
TAGS  := sqlite_fts5

.PHONY: help setup build test lint fuzz bench demo clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

setup: ## install what builds and tests need (Debian packages, model files, test servers)
	bash scripts/setup.sh

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

build: ## build bin/vaultask as releases are built, stamped with VERSION (default: git describe)
	bash scripts/build-release.sh bin/vaultask $(VERSION)

test: ## run every test with the race detector (installs what they need first)
	bash scripts/test.sh

lint: ## gofmt, go vet, staticcheck (the project's build tags), shellcheck, the Dockerfile and the compose file
	bash scripts/lint.sh

fuzz: ## run every fuzz target for FUZZTIME each (default 20s)
	bash scripts/fuzz.sh $${FUZZTIME:-20s}

bench: ## run the benchmarks of both built-in models (about 2 h 40 min on 2 cores by estimate, an hour more the first time) and write reports/BENCHMARKS.md, reports/bench/results.json and reports/bench/*.png, then the README's targets table from them; SIZE=smoke for a quick pass; a tree with uncommitted changes is refused (DIRTY=1 measures it, marked)
	bash scripts/setup.sh
	go run -tags $(TAGS) ./devtools/cmd/bench -size $${SIZE:-full} -out reports $${DIRTY:+-dirty}
	go run -tags $(TAGS) ./devtools/cmd/bench -readme README.md -out reports

demo: ## the live system on the demo vault: a test CouchDB, LiveSync-format notes, vaultask serve (no API keys)
	bash scripts/demo.sh

clean: ## remove build outputs and the demo index
	rm -rf bin data
