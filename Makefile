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
.PHONY: setup build run test test-matrix test-toolchains campaign matrix fixtures

setup:
	bash ci/setup.sh

build:
	$(GO) build -o $(BIN)/sfconform ./cmd/sfconform

run: setup build
	$(BIN)/sfconform run $(RUN_ARGS)

# Setup has run before the tests below: a tool it provides that is missing
# fails the test that needs it instead of skipping it (internal/testenv).
REQUIRE_SETUP := SFCONFORM_REQUIRE_SETUP=1

# Package tests first, then the Ginkgo suites once (not again under go test).
test: setup
	$(GO) vet ./...
	$(REQUIRE_SETUP) $(GO) test -count=1 $$($(GO) list ./... | grep -v '/suites/')
	@mkdir -p $(REPORTS)
	$(REQUIRE_SETUP) $(GINKGO) -r --randomize-all --fail-on-empty --label-filter='!slow && !matrix' --junit-report=$(CURDIR)/$(REPORTS)/junit.xml ./suites

# The whole toolchain table (./suites/toolchain): every real producer and
# consumer, target and pattern, known deviations expected; make test runs
# a quick slice of it (the entries without the label matrix).
test-matrix: setup
	@mkdir -p $(REPORTS)
	$(REQUIRE_SETUP) $(GINKGO) -p --randomize-all --fail-on-empty --label-filter='!slow' --junit-report=$(CURDIR)/$(REPORTS)/matrix.xml ./suites/toolchain

# The former name of test-matrix.
test-toolchains: test-matrix

# The long campaigns (label slow): many more seeds per target and version.
campaign: setup
	@mkdir -p $(REPORTS)
	$(REQUIRE_SETUP) $(GINKGO) -r --randomize-all --label-filter=slow --junit-report=$(CURDIR)/$(REPORTS)/campaign.xml ./suites

# docs/matrix.md and its stored cases (docs/matrix/cases), regenerated:
# every target x producer x consumer x pattern (sfconform matrix).
matrix: setup build
	$(BIN)/sfconform matrix

fixtures:
	bash sframe/testdata/regen.sh
