# sfconform. The two commands are `make run` and `make test` (see README.md);
# both start with `make setup`, which is idempotent and quick when all is there.

GO      ?= go
GINKGO  ?= ginkgo
BIN     := bin
REPORTS := reports
# Extra flags for `make run`, e.g. make run RUN_ARGS="--targets s390x --seed 7".
RUN_ARGS ?=

# setup must finish before anything is built: the emulator links against
# the Unicorn it installs.
.NOTPARALLEL:
.PHONY: setup build run test fixtures

setup:
	bash ci/setup.sh

build:
	$(GO) build -o $(BIN)/sfconform ./cmd/sfconform

run: setup build
	$(BIN)/sfconform run $(RUN_ARGS)

# The Ginkgo step runs only once ./suites holds a suite (a RunSpecs call).
test: setup
	$(GO) vet ./...
	$(GO) test ./...
	@if grep -rqs --include='*_test.go' 'RunSpecs(' suites; then \
		mkdir -p $(REPORTS); \
		echo "$(GINKGO) -r --randomize-all --fail-on-empty --junit-report=$(CURDIR)/$(REPORTS)/junit.xml ./suites"; \
		$(GINKGO) -r --randomize-all --fail-on-empty --junit-report=$(CURDIR)/$(REPORTS)/junit.xml ./suites; \
	else \
		echo "no Ginkgo suites under ./suites yet"; \
	fi

fixtures:
	bash sframe/testdata/regen.sh
