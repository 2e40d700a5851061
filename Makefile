# Switchboard build and test entry points. CI runs `make test` (see .ci/run).
#
# The npm peers in test/peers (real MCP servers and the TypeScript SDK, pinned by
# package-lock.json) are installed by `make peers`, which `make test` runs first; it
# reinstalls only when the lock file or package.json is newer than the last install.

SHELL := /bin/sh
.DEFAULT_GOAL := test

GO   ?= go
NPM  ?= npm

# Pinned: v0.8.2 (staticcheck 2026.2.2) is what @latest resolved to on the module proxy; it runs on Go 1.26.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

PEERS       := test/peers
PEERS_STAMP := $(PEERS)/node_modules/.switchboard-installed

# Fuzzing: `make fuzz` runs every Fuzz target for FUZZTIME each, one at a time (go test
# allows -fuzz to match a single target in a single package). Longer: make fuzz FUZZTIME=5m
FUZZTIME ?= 10s

.PHONY: all test peers postgres chromium build man lint bench bench-gateway fuzz soak clean release-check release-schema

all: lint build test

# Every release target must also build with the release's environment and flags; the tests run
# here. make test type-checks each target from source (crossbuild -typecheck: a few seconds of CPU
# each, and a target whose sources have not changed since it passed is not checked again), where
# compiling one target compiles the standard library and every dependency for it (about 2 minutes of
# CPU on a cold build cache, docs/decisions.md); make release-check compiles and links every target.
# The tests are mostly CPU-bound (race-built servers re-run as children) but wait too (handshakes,
# the browser, timeouts): a third package at a time and the type checks beside them keep both
# cores busy (measured on 2 idle cores: 9 m 59 s with -p 2 and the cross-compile first).
TEST_PARALLEL ?= 3

# The tests' stdio MCP servers run as this small race-built program (internal/testserver/cmd/testserver),
# built once here, and not as their race-built test binaries: a start costs half the CPU. The build
# links race-compiled packages that the test build needs anyway; go build skips it when up to date.
TESTSERVER_PROGRAM := bin/testserver-race

# -race turns on the compiler's unsafe-pointer checks (checkptr) in every package. In modernc's
# SQLite, C translated to Go, they are about 40 % of the CPU of every statement (a new database's
# migrations: 32 ms of CPU instead of 19), for checks of a dependency's pointer arithmetic that
# none of our tests is about; the race detector still watches its memory. Our own code and every
# other dependency keep them (docs/decisions.md, "The suite from a cold build cache").
TEST_GCFLAGS := modernc.org/...=-d=checkptr=0

test: peers postgres chromium
	@$(GO) run ./test/release/crossbuild -config .goreleaser.yaml -typecheck & cross=$$!; \
	$(GO) build -race -o $(TESTSERVER_PROGRAM) ./internal/testserver/cmd/testserver && \
	SWITCHBOARD_TESTSERVER_PROGRAM=$(abspath $(TESTSERVER_PROGRAM)) \
		$(GO) test -race -count=1 -timeout 20m -p $(TEST_PARALLEL) -gcflags='$(TEST_GCFLAGS)' ./...; rc=$$?; \
	wait $$cross || { echo "make: a release target does not type-check (above; make release-check compiles them)" >&2; rc=1; }; \
	exit $$rc

# What CI can check of a release without Docker or GoReleaser: .goreleaser.yaml against
# GoReleaser's schema, the Dockerfiles against the image rules (go test ./test/release), and
# every target compiled with the release's flags and checked to be static (crossbuild), and the binary
# that `go install …@vX` (from a file:// module proxy) or a build in a git clone makes reporting its
# version and commit (SWITCHBOARD_INSTALL_CHECK: minutes of CPU, so not in make test).
release-check:
	SWITCHBOARD_INSTALL_CHECK=1 $(GO) test -count=1 -timeout 30m ./test/release
	$(GO) run ./test/release/crossbuild -config .goreleaser.yaml

# Regenerates test/release/goreleaser.schema.json from GoReleaser's configuration types
# (test/release/schemagen is its own module, pinned to the GoReleaser version we target).
release-schema:
	cd test/release/schemagen && $(GO) run . > ../goreleaser.schema.json

peers: $(PEERS_STAMP)

# npm ci deletes node_modules and installs exactly what package-lock.json says; the stamp
# is written only if it succeeds, so a failed install is retried on the next run.
$(PEERS_STAMP): $(PEERS)/package-lock.json $(PEERS)/package.json
	@command -v $(NPM) >/dev/null 2>&1 || { echo "make: npm not found: install Node.js 20+ (with npm) to run the MCP peers" >&2; exit 1; }
	$(NPM) ci --prefix $(PEERS) --no-audit --no-fund
	touch $@

# The tests that need PostgreSQL (the store, the task API, the scale-out test of the daemon)
# start a real server through internal/testpg, from Debian's postgresql package
# (/usr/lib/postgresql/*/bin). Installed with apt-get only when missing, and skipped when
# SWITCHBOARD_TEST_POSTGRES_DSN points the tests at a server of your own.
postgres:
	@if [ -n "$$SWITCHBOARD_TEST_POSTGRES_DSN" ] || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then exit 0; fi; \
	sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	echo "make: installing PostgreSQL for the store tests: apt-get install postgresql"; \
	$$sudo apt-get update && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql || \
		{ echo "make: installing PostgreSQL failed; run: apt-get install -y postgresql" >&2; exit 1; }; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
		{ echo "make: PostgreSQL installed but no /usr/lib/postgresql/*/bin/initdb" >&2; exit 1; }

# The web console's browser tests (internal/web) drive Debian's Chromium through chromedp.
# Installed with apt-get only when missing; SWITCHBOARD_TEST_CHROME names another binary.
chromium:
	@if [ -n "$$SWITCHBOARD_TEST_CHROME" ] || command -v chromium >/dev/null 2>&1; then exit 0; fi; \
	sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	echo "make: installing Chromium for the web console's browser tests: apt-get install chromium"; \
	$$sudo apt-get update && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium || \
		{ echo "make: installing Chromium failed; run: apt-get install -y chromium" >&2; exit 1; }

build:
	$(GO) build -o bin/switchboard ./cmd/switchboard

# Man pages for every command, made from the same command tree as --help, into man/
# (git-ignored): man -l man/switchboard-call.1
man:
	rm -rf man
	$(GO) run ./internal/cli/mangen man

# gofmt is given files, not ./..., so that it never walks test/peers/node_modules.
lint:
	@files=$$(find . -type f -name '*.go' -not -path './.git/*' -not -path '*/node_modules/*' -not -path '*/testdata/*'); \
	unformatted=$$(gofmt -l $$files); \
	if [ -n "$$unformatted" ]; then echo "gofmt: these files need formatting (run gofmt -w):" >&2; echo "$$unformatted" >&2; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

bench: peers postgres
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The gateway benchmark (docs/benchmarks.md): direct vs through the gateway vs through a bare
# reverse proxy and a TCP relay at 1, 16 and 64 callers, CPU per call, resident memory.
# Flags: make bench-gateway ARGS="-duration 10s -progress -json"
bench-gateway:
	$(GO) run ./test/bench/gateway $(ARGS)

# A smoke run: each Fuzz target found under ./... gets FUZZTIME of fuzzing on top of its
# seed corpus (which plain `make test` already runs).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' "$$pkg" | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) "$$pkg"; \
		done; \
	done

# The soak (docs/operations.md, "Soak test"; not part of `make test`): SOAK_DURATION (default
# 10m) of mixed load through a real daemon's gateway, an upstream killed every minute and a
# reload every two, then a report of every request answered, refused or lost and of the
# daemon's memory and goroutines. make soak SOAK_DURATION=1m SOAK_REPORT=soak.md
# SOAK_TIMEOUT bounds the whole test: the duration plus about 5 minutes.
SOAK_DURATION ?= 10m
SOAK_TIMEOUT  ?= 20m
soak: peers
	SWITCHBOARD_SOAK=1 SOAK_DURATION=$(SOAK_DURATION) SOAK_REPORT=$(abspath $(SOAK_REPORT)) \
		$(GO) test -count=1 -run '^TestSoak$$' -timeout $(SOAK_TIMEOUT) -v ./internal/soak

clean:
	rm -rf bin man $(PEERS)/node_modules coverage.out coverage.html *.test *.prof
