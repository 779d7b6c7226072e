# toolscout: build, run and test. `make test` installs what it needs.
GO       ?= go
BIN      := bin/toolscout
PKGS     := ./...

# Every go command make runs builds without DWARF, the debugger's tables
# (-gcflags=all=-dwarf=false -ldflags=-w): panics, stack traces and the
# race detector's reports come from the binary's own symbol table and are
# unchanged. From an empty build cache on 2 cores it took 15% off the
# CPU of compiling and linking, measured alike for the plain build of
# bin/toolscout (122 -> 103 CPU s) and the race test binaries of ./...
# (228 -> 196), and bin/toolscout is 54 MB instead of 65
# (docs/benchmarks/2026-12-07-build-modes.md). The go commands the tests
# run (a test's go build of bin/toolscout) inherit it, so they find what
# make compiled. For a debugger: make build DEBUGINFO=1.
DEBUGINFO ?=
ifeq ($(strip $(DEBUGINFO)),)
export GOFLAGS += -gcflags=all=-dwarf=false -ldflags=-w
endif

.PHONY: all build run test beside-unit tracked vet fmt-check fuzz unit npm conformance conformance-npm haproxy cluster-test bench bench-scale bench-code test-stress eval generate wordvectors longtasks clean

all: build

build:
	@echo "building $(BIN) (a first build downloads and compiles the Go modules: a minute or two)"
	$(GO) build -o $(BIN) ./cmd/toolscout

# The main job on embedded defaults: serve the built-in catalog over
# Streamable HTTP on localhost (no config; Ollama is used only if it runs).
ADDR ?= 127.0.0.1:8080
run: build
	$(BIN) serve --http $(ADDR)

# Everything CI runs. npm ci installs the real MCP peers the end-to-end and
# gateway tests talk to (versions pinned in package-lock.json); HAProxy is
# the cluster test's load balancer.
#
# The phases that leave the CPU idle run beside one that does not (issue
# 47, item 5; docs/benchmarks/2026-12-06-suite-idle.md): npm ci and
# HAProxy's install (downloads, disk) beside vet and the plain build of
# bin/toolscout (vet's compiles are race builds, see vet), and fuzz there
# too; conformance, then the cluster test (node, HAProxy and replicas
# answering requests: under half of the two cores) beside unit. The
# suite is CPU-bound from start to end, so where fuzz runs does not move
# its end; beside vet it no longer takes CPU from unit's test binaries
# while they run, the longest of which (server, cmd/toolscout) have
# timeouts of their own to meet (issue 47, item 5). Each phase's output is printed whole when
# it ends (make's --output-sync), and make names a phase that failed
# ("*** [Makefile:NN: unit] Error 1") after the others have ended.
SYNC := --no-print-directory --output-sync=target
test: tracked fmt-check
	@$(MAKE) $(SYNC) -j 5 vet build npm conformance-npm haproxy fuzz
	@$(MAKE) $(SYNC) eval
	@echo "unit, and beside it conformance then cluster-test (each phase's output when it ends)"
	@$(MAKE) $(SYNC) -j 2 unit beside-unit

# The cluster test's phases with 1, 2 and 3 replicas taking traffic
# check that no request fails and that the replicas answer alike: 2 s of
# load each is thousands of requests (4 s, the default, measures
# throughput; on 2 shared cores it does not grow with replicas anyway).
# The kill and the rolling restarts last as long as before. A
# CLUSTER_FLAGS given to make test comes after, and wins.
beside-unit: build npm conformance-npm haproxy
	@$(MAKE) $(SYNC) conformance
	@$(MAKE) $(SYNC) cluster-test CLUSTER_FLAGS="-phase 2s $(CLUSTER_FLAGS)"

npm: node_modules/.package-lock.json

# Each fuzz target of a data-dir decoder for FUZZTIME (issue 36): one go
# test per target, as -fuzz takes one. An input that fails is written to
# the package's testdata/fuzz/<target>/ and fails the run; the seeds
# there also run in `unit` as plain tests. About 38 s on 2 cores with a
# warm build cache (the first run builds the packages with coverage
# instrumentation: a minute or two more). Minimizing each new interesting
# input took whole runs (go test's default allows it 60 s: 939 runs of
# the catalog cache in a minute, none new); 1 s leaves the time to
# fuzzing, and still shortens a failing input. The decoders live in small
# format packages (index/store/format, index/keyword/manifest,
# embed/fitfile, index/vector/snapfile): -fuzz instruments every package
# of the test binary, and their callers' would bring Bleve, bbolt,
# chromem-go and gonum into that build
# (issue 47, item 5; internal/srccheck's TestFuzzTargetsAreLight).
#
# In `make test` the fuzz runs beside vet and the build on a 2-core machine,
# where only CPU seconds lengthen the suite: one fuzz worker per target
# (FUZZPARALLEL) gives each target its FUZZTIME for half the CPU of one
# worker per core. A longer hunt: make fuzz FUZZTIME=5m FUZZPARALLEL=2.
FUZZTIME ?= 3s
FUZZPARALLEL ?= 1
FUZZ_TARGETS := ./index:FuzzCatalogCache ./index/store/format:FuzzListed ./index/store/format:FuzzFit \
	./index/store/format:FuzzFeedbackLog ./index/store/format:FuzzPins ./index/vector/snapfile:FuzzSnap ./index/vector/snapfile:FuzzExport \
	./index/vector/snapfile:FuzzLegacyDocument \
	./index/keyword/manifest:FuzzManifest ./embed/fitfile:FuzzLoadFit ./internal/checksum:FuzzBody
#
# Go 1.26's fuzz coordinator can fail a run that found nothing with a
# bare "context deadline exceeded" when -fuzztime ends (go.dev/issue/75804,
# fixed in Go 1.27): a failing input is always written to testdata/fuzz,
# so a failure that wrote none and says only that is reported and passed.
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t#*:}; dir=$$pkg/testdata/fuzz/$$name; \
	  echo "fuzz $$name in $$pkg for $(FUZZTIME)"; \
	  before=$$(ls $$dir 2>/dev/null | wc -l); \
	  if out=$$($(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -parallel $(FUZZPARALLEL) -fuzzminimizetime 1s $$pkg 2>&1); then \
	    echo "$$out" | tail -n 1; \
	  elif [ "$$(ls $$dir 2>/dev/null | wc -l)" = "$$before" ] && echo "$$out" | grep -q '^    context deadline exceeded$$' && ! echo "$$out" | grep -q 'Failing input written'; then \
	    echo "$$name: no failing input; go test reported only the fuzz coordinator's deadline race (go.dev/issue/75804), not a finding"; \
	  else \
	    echo "$$out"; exit 1; \
	  fi; \
	done

# npm ci through .ci/npm-ci: each attempt bounded (NPM_CI_TIMEOUT, 600 s),
# a stalled one stopped and tried once more (see the script).
node_modules/.package-lock.json: package.json package-lock.json
	bash .ci/npm-ci .

# The official MCP conformance suite (issue 51): its server scenarios
# against the go-sdk's own conformance server (built from the module
# cache) directly and through toolscout in front of it, compared in the
# same run, for 2025-11-25 (stateful) and 2026-07-28 (stateless); then
# the scenarios that need no fixture against serve on the built-in
# catalog; then the client-side auth scenarios with toolscout's upstream
# OAuth client as the client (cmd/conformance/authclient; three runs of
# the suite's CLI, each a suite of scenarios in parallel: 16 s). Fails on
# a scenario lost through toolscout that conformance/lost.txt does not
# list, and on a listed one that passes now. The suite needs Node 22 or
# newer: conformance/package.json pins it as the npm package `node`,
# installed there with the suite (no sudo); unit runs the other tests'
# Node.js peers on it too (PINNED_NODE below). 83 s and 18 CPU s on 2 heavily loaded cores, all four
# suites (docs/benchmarks/2026-12-06-test-cpu-3.md).
conformance: build conformance-npm
	NODE_COMPILE_CACHE="$(NODE_CACHE)" $(GO) run ./cmd/conformance -bin $(BIN)

conformance-npm: conformance/node_modules/.package-lock.json

conformance/node_modules/.package-lock.json: conformance/package.json conformance/package-lock.json
	bash .ci/npm-ci conformance

# No executables, object files or files over 5 MB in the repository.
tracked:
	@bash .ci/check-tracked

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# vet with -race: vet compiles every package (and each test variant) to
# read its imports' types, and with the same build flags as `unit` those
# compiles are the race builds unit's test binaries link, not a second
# set. From an empty build cache (measured, 2 cores, loaded: vet, then the
# race test binaries, then bin/toolscout): 417 CPU s with plain vet, 382
# with vet -race (the plain build of bin/toolscout then compiles its own
# packages: 128 CPU s, against 6 when vet had). The analyzers are the
# same; only files built for race-off alone (server/codemode/race_off.go,
# a constant) are not vetted.
vet:
	$(GO) vet -race $(PKGS)

# -race everywhere: the indexes embed concurrently and the engine is shared.
# An explicit -timeout per package binary: go test's default 10 minutes
# ended a loaded run of cmd/toolscout's tests mid-way (issue 36).
# -vet=off: `vet` above has run every analyzer on every package; go
# test's own subset would only repeat it.
TEST_TIMEOUT ?= 20m
#
# server/codemode runs once more without -race: its sandbox's
# address-space limit is off in race builds (the race detector maps
# terabytes of shadow memory), so that is where the limit is tested.
# PLAIN_TESTS run only without -race, in a second pass: tests whose
# subject is arithmetic on one goroutine (scores to the bit, a ranking
# as recorded, a recall, bytes as written, a heap or an allocation
# count) took five to ten times their CPU under the race detector and
# found no race the tests beside them do not (the concurrent paths they
# pass through are raced by tests of their own); internal/racetest says
# which, and internal/srccheck's TestPlainTestsListed keeps this list
# and the tests that skip themselves under -race (racetest.Plain) alike.
# The packages they need are built plain by `build`. Measured from an
# empty build cache: docs/benchmarks/2026-12-07-build-modes.md.
PLAIN_TESTS := ./index/vector:TestQuantizedRecall ./index/vector:TestColdSyncMatrixNotResident \
	./index/vector:TestColdSyncCheckpointsCopyNoMatrix ./index/vector:TestDamagedQuantizedRowsRecomputed \
	./index/vector:TestDamagedMatrixSalvaged \
	./index/keyword:TestPrunedSumIsTheFullSum ./index/keyword:TestDirectTermsScoreAsBleve \
	./index/keyword:TestFuzzyClauseAsBleve ./index/keyword:TestTermAtATimeScoresAsHeap \
	./index/keyword:TestQueryPartsPartitionTheIndex ./index/keyword:TestIncrementalLengthsAsCold \
	./search:TestFeedbackRankingUnchanged ./search:TestDomainTextBuiltAsBefore ./search:TestDomainTextHeldCompact \
	./search:TestFusionGarbage \
	./index:TestStreamCatalogCacheHeap ./index:TestStreamCatalogCacheSameFile ./index:TestParseCatalogFromMutations \
	./index:TestCachedExtrasOnDemand ./index:TestCachedParamsOnDemand ./index:TestCatalogDelta \
	./eval:TestBaseline ./eval:TestConfidenceReport ./eval:TestKeywordDeterministic ./eval:TestFusionObjectiveWorst
empty :=
space := $(empty) $(empty)
PLAIN_PKGS := $(sort $(foreach t,$(PLAIN_TESTS),$(firstword $(subst :, ,$(t)))))
PLAIN_PKGS := $(if $(filter ./...,$(PKGS)),$(PLAIN_PKGS),$(filter $(PKGS),$(PLAIN_PKGS)))
PLAIN_RUN := ^($(subst $(space),|,$(strip $(foreach t,$(PLAIN_TESTS),$(lastword $(subst :, ,$(t)))))))$$
#
# go test starts the packages' test binaries in the order of its command
# line (./... is sorted by path), each once every earlier one has started,
# and counts a running binary in its -p (GOMAXPROCS, 2 here) even while
# it waits on child processes. So the longest packages go first, and
# -p 4 lets the short ones run beside the two longest instead of queuing
# behind them: with -p 2 in import-path order, `server` (about 110 s)
# could start only after `cmd/toolscout` (about 140 s) had ended.
# UNIT_P=2 (measured 2026-12-07, empty build cache): the same CPU, the
# two longest 30 to 40 s sooner, the suite 32 s later.
UNIT_P ?= 4
# (With PKGS set to fewer packages, only those.)
UNIT_FIRST := $(if $(filter ./...,$(PKGS)),./cmd/toolscout ./server ./server/gateway ./index/keyword \
	./index/vector ./search ./eval ./index/store ./server/codemode)
#
# The tests' Node.js peers (the reference servers toolscout starts as
# upstreams, the TypeScript SDK's clients) run on the Node that
# conformance/package.json pins (22.23.3), first on unit's PATH, not on
# the machine's (Node 20 here), with V8's compile cache
# (NODE_COMPILE_CACHE, Node 22.1 and newer; Node 20 ignores it): a
# reference server's start took 0.33-0.45 CPU s on Node 20 and 0.20-0.25
# on the pinned Node with the cache, and cmd/toolscout's tests start 95
# node processes (docs/benchmarks/2026-12-07-beside-unit.md). The peers are
# the same on every machine, as their npm packages already were. A test
# run by hand with go test uses the machine's node.
# The cache is set for unit's and conformance's commands only, not for
# npm (which may run on a Node that reads it while npm ci rewrites
# node_modules).
PINNED_NODE := $(CURDIR)/conformance/node_modules/node/bin
NODE_CACHE ?= $(CURDIR)/node_modules/.cache/node-compile
unit: npm conformance-npm
	PATH="$(PINNED_NODE):$$PATH" NODE_COMPILE_CACHE="$(NODE_CACHE)" $(GO) test -race -vet=off -count=1 -p $(UNIT_P) -timeout $(TEST_TIMEOUT) $(UNIT_FIRST) $(PKGS)
	$(GO) test -vet=off -count=1 -timeout 5m ./server/codemode
	$(if $(PLAIN_PKGS),$(GO) test -vet=off -count=1 -timeout 5m -run '$(PLAIN_RUN)' $(PLAIN_PKGS))

# The concurrency-sensitive tests many times over, beside two busy loops
# that take both cores (each ends by itself, and with the target): what
# a loaded CI machine does to them (issue 47). Not part of `make test`.
STRESS_COUNT ?= 30
# (One test name or pattern without "|" per entry: the list is a shell
# word list.)
STRESS_TESTS ?= ./server/surface:TestResubscribeAfterRestart$$ ./server/codemode:. ./server:TestRunCode \
	./server:TestFeedbackCreditsTheSearchThatListedTheTool ./server:TestServerDownLastRunIsWaitedFor \
	./server:TestListChangedOncePerChange$$ ./cmd/toolscout:TestFeedbackForgetReachesServe$$ \
	./cmd/toolscout:TestReadOnlySwapsInANewerBuild$$ ./cmd/toolscout:TestCallersRotateWithoutRestart$$ \
	./cmd/toolscout:TestReadOnlyRetriesARefusedBuild$$ ./cmd/toolscout:TestServeOperationsEndpoints$$ \
	./server/gateway:TestStdioTwoClients$$ ./server:TestClientRequestsTypeScript$$ ./server:TestClientRequestsPassThrough$$ \
	./server:TestCancellationReachesUpstream$$ ./server/gateway:TestCloseWhileListing$$
test-stress:
	@timeout 3600 sh -c 'while :; do :; done' & b1=$$!; \
	timeout 3600 sh -c 'while :; do :; done' & b2=$$!; \
	trap 'kill $$b1 $$b2 2>/dev/null' EXIT INT TERM; \
	for t in $(STRESS_TESTS); do \
	  pkg=$${t%%:*}; run=$${t#*:}; \
	  echo "stress: $$pkg -run '$$run' x$(STRESS_COUNT) under load"; \
	  $(GO) test -race -vet=off -count=$(STRESS_COUNT) -timeout 60m -run "$$run" $$pkg || exit 1; \
	done

# HAProxy (the Debian package) for the cluster test, installed with
# apt-get when it is missing (with sudo when not root).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
haproxy:
	@command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || { \
	  echo "installing haproxy (apt-get) for the cluster test"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy >/dev/null || \
	  { $(SUDO) apt-get update >/dev/null && \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy >/dev/null; }; }

# Three `serve --http --read-only` replicas over one data dir behind
# HAProxy, under load of both protocol generations: scaling, a SIGKILL,
# rolling restarts (about 40 s; exits 1 when a check fails). Flags:
# go run ./cmd/clustertest -help, e.g. CLUSTER_FLAGS="-tools 100000".
CLUSTER_FLAGS ?=
cluster-test: build haproxy
	$(GO) run ./cmd/clustertest -bin $(BIN) $(CLUSTER_FLAGS)

# Code mode against the meta-tools step by step and every tool listed,
# on the tasks of cmd/benchcode/tasks.yaml over the reference servers:
# tokens, round trips, wall time, correctness, the mistakes battery and
# run_code's overhead (about 30 s).
bench-code: build npm
	$(GO) run ./cmd/benchcode -bin $(BIN)

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./index ./search ./embed

# How toolscout scales: cold index, re-index, one-shot search, serve start
# and query latency on seeded synthetic catalogs (medians of 3 runs; about
# 10 minutes). SIZES=1000,10000 for a quick look.
SIZES ?= 1000,10000,50000,100000
bench-scale: build
	$(GO) run ./cmd/benchscale -bin $(BIN) -sizes $(SIZES) -runs 3

# The quality table on the built-in dataset (the gate itself is TestBaseline).
eval: build
	$(BIN) eval --embedder builtin

generate:
	$(GO) generate ./index

# The built-in embedder's word vectors, learned from Debian's English
# package descriptions (apt's lists) and the npm and PyPI package summaries
# given in CORPUS_TSV (tab-separated files with a header row and a
# "summary" column; docs/embedders.md, says where to get them).
# Deterministic for a given corpus; the corpus SHA-256 it prints is
# recorded in BENCHMARKS.md. Without CORPUS_TSV it stops and says so:
# Debian's descriptions alone give weaker vectors than the shipped ones,
# so that build has to be asked for (CORPUS_TSV=none).
CORPUS_TSV ?=
wordvectors:
	@if [ -z "$(strip $(CORPUS_TSV))" ]; then \
		echo 'make wordvectors: set CORPUS_TSV to the npm and PyPI summary lists the shipped vectors were learned from, e.g. CORPUS_TSV="pypi.tsv npm.tsv" (docs/embedders.md), or CORPUS_TSV=none for Debian descriptions alone (weaker vectors)' >&2; \
		exit 2; \
	fi
	@for f in $(filter-out none,$(CORPUS_TSV)); do \
		[ -r "$$f" ] || { echo "make wordvectors: CORPUS_TSV file $$f cannot be read" >&2; exit 2; }; \
	done
	apt-get update -o Acquire::Languages=en >/dev/null
	$(GO) run ./cmd/genvectors -out embed/wordvectors.bin $(foreach f,$(filter-out none,$(CORPUS_TSV)),-tsv $(f):summary)
	@if [ -n "$(TEACHER)" ]; then \
		$(GO) run ./cmd/genvectors -teacher $(TEACHER) -ollama http://$(or $(OLLAMA_HOST),127.0.0.1:11434) -keep 0.5 -sentences 24000 -vocab-from embed/wordvectors.bin -out embed/wordvectors.bin; \
	else \
		echo 'make wordvectors: without TEACHER=MODEL (an embedding model behind Ollama'"'"'s API) the vectors have no distilled half: weaker than the shipped ones (docs/embedders.md)' >&2; \
	fi

# The built-in dataset's long-task queries, composed (seeded) from its
# single-tool queries.
longtasks:
	$(GO) run ./cmd/genlongtasks

clean:
	rm -rf bin
