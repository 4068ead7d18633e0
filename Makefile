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

.PHONY: binutils-src test-binutils-src verify-fixes packages gcc-newest check-gcc-findings
.PHONY: setup build run test test-matrix test-toolchains campaign matrix fixtures realcode pipelines check-matrix lint docker-test

setup:
	bash ci/setup.sh

# GNU binutils built from sid's source package (gas, ld, objdump, readelf,
# libsframe for x86-64, aarch64, s390x): producer gas-src, consumers
# libsframe-src, objdump-src, readelf-src. Slow (tens of CPU minutes), cached
# under $SFCONFORM_CACHE/toolchains/binutils-src-<version>; not part of
# setup or test. Its tests skip without it unless SFCONFORM_REQUIRE_BINUTILS_SRC=1.
binutils-src: setup
	bash ci/binutils-src.sh

# The tests of the source build and its plug-ins, which skip without it in
# make test: here its absence fails them.
test-binutils-src: binutils-src
	SFCONFORM_REQUIRE_BINUTILS_SRC=1 $(GO) test -count=1 -run 'SourceBuild|FromDir|FindLibsframe' ./toolchain ./producer ./consumer

# The proposed patches (docs/findings/NNN-*.patch), each built into the
# component it touches from binutils-src's source tree, with the finding's
# input, its stored cases and a matrix slice replayed with and without it
# (ci/verify-fixes.sh). VERIFY_ARGS: finding numbers, e.g. VERIFY_ARGS=029.
VERIFY_ARGS ?=
verify-fixes: binutils-src
	bash ci/verify-fixes.sh $(VERIFY_ARGS)

# The newest gcc Debian offers (sid's gcc-N) for x86-64 and s390x, to
# assembly only, in a private root (ci/gcc-newest.sh; about 60 MB of .debs,
# cached under $SFCONFORM_CACHE/toolchains/gcc-<version>), and the gcc
# findings (docs/findings/NNN-inputs/gcc/) reproduced with it and
# binutils-src's as and objdump. Not part of setup or test.
gcc-newest: setup
	bash ci/gcc-newest.sh

check-gcc-findings: gcc-newest binutils-src
	bash docs/findings/check-gcc.sh

build:
	$(GO) build -o $(BIN)/sfconform ./cmd/sfconform

run: setup build
	$(BIN)/sfconform run $(RUN_ARGS)

# Setup has run before the tests below: a tool it provides that is missing
# fails the test that needs it instead of skipping it (internal/testenv).
REQUIRE_SETUP := SFCONFORM_REQUIRE_SETUP=1

# Package tests first, then the Ginkgo suites once (not again under go test).
test: setup lint
	$(GO) vet ./...
	$(REQUIRE_SETUP) $(GO) test -count=1 $$($(GO) list ./... | grep -v '/suites/')
	$(GO) test -race -count=1 -run 'Chaos|TestExec' ./consumer
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
	SFCONFORM_CHAOS_LONG=1 $(GO) test -race -count=1 -timeout 2h -run 'Chaos' ./consumer

# docs/matrix.md and its stored cases (docs/matrix/cases), regenerated:
# every target x producer x consumer x pattern (sfconform matrix).
matrix: setup build
	$(BIN)/sfconform matrix --out docs/matrix.md --cases docs/matrix/cases

# The real-code campaign: zlib, bzip2 and lua from Debian's source packages
# through every compiler x optimisation x assembler x link, every output's
# SFrame checked; then Csmith programs run under emulation (realcode/).
REALCODE_ARGS ?=
CSMITH_ARGS ?= --seeds 1-20 --opts O0,O2,O3 --consumer builtin,libsframe
realcode: setup build
	$(BIN)/sfconform realcode $(REALCODE_ARGS)
	$(BIN)/sfconform csmith -q $(CSMITH_ARGS)

# docs/pipelines.md regenerated: check's test programs through post-link
# tools, --gc-sections, ld -r chains, C++ COMDAT and mixed SFrame versions,
# with every provisioned gas/ld series, each output checked (pipelines/).
pipelines: setup build
	$(BIN)/sfconform pipelines -q --out docs/pipelines.md

# docs/packages.md regenerated: Debian source packages (ci/packages.sh
# fetches them and installs cmake; not part of setup or test: slow) built by
# their own build systems with -Wa,--gsframe and every binutils series,
# every ELF output checked, .sframe sized against .eh_frame (packages/).
# Resumable: each build's result stays in PACKAGES_DIR. PACKAGES_ARGS: e.g.
# PACKAGES_ARGS="--packages zlib --series 2.47"; other optimisation levels
# beside Debian's -O2 (whose builds stay): PACKAGES_ARGS="--series 2.47
# --opt -O0,-O1,-O3,-Os". CI runs the campaign as shards (campaign.yml).
PACKAGES_DIR  ?= $(SFCONFORM_CACHE_DIR)/packages-campaign
PACKAGES_ARGS ?=
SFCONFORM_CACHE_DIR ?= $(or $(SFCONFORM_CACHE),/var/cache/sfconform)
packages: setup build
	bash ci/packages.sh
	$(BIN)/sfconform packages --dir $(PACKAGES_DIR) --targets x86-64,aarch64,s390x $(PACKAGES_ARGS) --out docs/packages.md

# The GitHub workflows (.github/workflows), linted by actionlint (pinned by
# go.mod's tool directive, fetched by setup), which runs shellcheck on their
# run: scripts; a finding fails. shellcheck comes with setup: missing, it fails
# here rather than actionlint skipping that check.
lint: setup
	@command -v shellcheck >/dev/null || { echo "lint: shellcheck is missing: run make setup" >&2; exit 1; }
	$(GO) tool actionlint -shellcheck=shellcheck -pyflakes= .github/workflows/*.yml

# make test inside the project's image (docker/Dockerfile), built and run with
# docker, or podman where that is what the machine has (ci/container.sh).
# DOCKER_BASE: the base image; <suite>-local (sid-local, bookworm-local) is
# made with debootstrap from Debian's archive when the engine lacks it, so no
# image registry is needed; debian:sid is what the Dockerfile names itself.
DOCKER_BASE ?= sid-local
docker-test:
	bash ci/container.sh $(DOCKER_BASE)

fixtures:
	bash sframe/testdata/regen.sh

# sfconform check on gcc output at every optimisation level, assembled by
# every provisioned gas, as objects, fixed-address and PIE executables.
check-matrix: setup
	$(REQUIRE_SETUP) SFCONFORM_CHECK_MATRIX=1 $(GO) test -count=1 -run TestCompilerMatrix -v ./check
