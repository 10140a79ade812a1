# ledgerd — see README.md. Every target is cgo-free except test-race (the race
# detector needs cgo).
GO      ?= go
PKGS    := ./...
# FUZZPARALLEL is the fuzzing workers per target (go test -parallel): one
# leaves the other core of a small box to everything else.
FUZZPARALLEL ?= 1
BENCHTIME ?= 300ms
BENCHCOUNT ?= 6
export GOFLAGS := -buildvcs=false

.PHONY: run run-live cluster build test test-unit test-race fmt vet lint fuzz fuzz-long bench stress clean clients bridge-tools e2e-bridge bench-compare ui-tools ui-screenshot

# run starts the dev venue with --compat: its users point ethers, viem and
# go-ethereum at it, and ethers cannot decode a receipt in the spec's shapes
# (README, "Client compatibility"). ./bin/ledgerd --dev alone serves the
# spec's shapes. --bots default quotes and trades every dev market so the
# book and candles move (docs/bots.md); --dev alone starts no bots.
run: build
	./bin/ledgerd --dev --compat --datadir ./data --bots default

# run-live is run with the live network's names (--prefix pod, docs/live.md):
# point the live network's own SDK at it with rpcUrl http://127.0.0.1:8545,
# wsUrl ws://127.0.0.1:8545 and restUrl http://127.0.0.1:8545/v1.
run-live: build
	./bin/ledgerd --dev --compat --prefix pod --datadir ./data --bots default

# cluster is run with two followers (docs/scaling.md): an embedded NATS
# JetStream server, the leader on 127.0.0.1:8545 and follower processes on
# :8546 and :8547 that serve reads and subscriptions and take over when the
# leader's lease lapses.
cluster: build
	./bin/ledgerd --dev --compat --datadir ./data --bots default --followers 2

build:
	CGO_ENABLED=0 $(GO) build -o bin/ledgerd ./cmd/ledgerd

# test runs every test: formatting and vet, the whole suite cgo-free, then
# again under the race detector.
test: lint clients test-unit test-race

test-unit: clients bridge-tools ui-tools
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 15m $(PKGS)

test-race: clients bridge-tools ui-tools
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 20m $(PKGS)

# clients installs the pinned ethers and viem the client matrix runs
# (bench/clients); it needs node and npm.
CLIENTS_JS := bench/clients/js
clients: $(CLIENTS_JS)/node_modules/.package-lock.json

$(CLIENTS_JS)/node_modules/.package-lock.json: $(CLIENTS_JS)/package.json $(CLIENTS_JS)/package-lock.json
	npm ci --prefix $(CLIENTS_JS) --no-audit --no-fund

# bridge-tools installs the bridged chain of the bridge tests (bench/bridge):
# anvil and solc, pinned, from npm (anvil's binary comes in its platform
# package, so no install script runs).
BRIDGE_NPM := bench/bridge/npm
bridge-tools: $(BRIDGE_NPM)/node_modules/.package-lock.json

$(BRIDGE_NPM)/node_modules/.package-lock.json: $(BRIDGE_NPM)/package.json $(BRIDGE_NPM)/package-lock.json
	npm ci --prefix $(BRIDGE_NPM) --no-audit --no-fund --ignore-scripts

# ui-tools installs playwright-core, pinned, with which the web view's
# browser test (bench/ui) drives Debian's chromium; it downloads no browser.
UI_NPM := bench/ui/npm
ui-tools: $(UI_NPM)/node_modules/.package-lock.json

$(UI_NPM)/node_modules/.package-lock.json: $(UI_NPM)/package.json $(UI_NPM)/package-lock.json
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix $(UI_NPM) --no-audit --no-fund --ignore-scripts

# ui-screenshot refreshes docs/ui.png and docs/ui-report.png (README,
# docs/ui.md): the browser tests against nodes whose bots traded for
# UI_WARMUP first, so the charts have candles and a PnL path.
UI_WARMUP ?= 5m
ui-screenshot: ui-tools
	LEDGERD_UI_SHOT=$(CURDIR)/docs/ui.png LEDGERD_UI_REPORT_SHOT=$(CURDIR)/docs/ui-report.png LEDGERD_UI_WARMUP=$(UI_WARMUP) \
		CGO_ENABLED=0 $(GO) test -count=1 -v -timeout 30m -run 'TestWebViewInBrowser|TestReportInBrowser' ./bench/ui

# e2e-bridge runs the whole bridge loop against anvil: deposit, trade,
# withdraw, claim (bench/bridge, TestBridgeLoop).
e2e-bridge: bridge-tools
	CGO_ENABLED=0 $(GO) test -count=1 -v -timeout 5m -run 'TestBridgeLoop' ./bench/bridge

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	CGO_ENABLED=0 $(GO) vet $(PKGS)

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# fuzz runs every Fuzz target in the tree for FUZZTIME each (default 20s),
# one target at a time with FUZZPARALLEL workers; fuzz-long is the campaign,
# FUZZTIME 10m by default (28 targets today: 4 h 40 min). Both are
# bounded: each target stops after FUZZTIME, and go's fuzzer fails an input
# that runs over 10 s. A failing target does not stop the others; the run
# lists the failures and fails at the end. A crasher lands in the package's
# testdata/fuzz/<target>/ (check it in once fixed: it joins the seeds that
# go test runs every time); docs/fuzzing.md records the campaigns.
fuzz: FUZZTIME ?= 20s
fuzz-long: FUZZTIME ?= 10m
fuzz fuzz-long:
	@failed=""; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list 'Fuzz.*' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f ($(FUZZTIME))"; \
	    CGO_ENABLED=0 $(GO) test -run XXX -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -parallel $(FUZZPARALLEL) $$pkg || failed="$$failed $$pkg.$$f"; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz targets that failed:$$failed"; exit 1; fi

bench:
	CGO_ENABLED=0 $(GO) test -run XXX -bench . -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) $(PKGS)

# stress drives a running node (make run) over loopback; bounded in count and time.
stress: build
	CGO_ENABLED=0 $(GO) run ./bench/cmd/loadgen -duration 10s

# bench-compare runs ledger-bench (docs/load.md) against a fresh ledgerd --dev
# and anvil in one run: SCENARIO (balance, chainid, transfer), RAMP
# (FROM:TO:STEP requests/s), DURATION per step and node, CONNS.
SCENARIO ?= balance
RAMP ?= 2000:10000:2000
DURATION ?= 3s
CONNS ?= 8
bench-compare: build bridge-tools
	CGO_ENABLED=0 $(GO) build -o bin/ledger-bench ./cmd/ledger-bench
	rm -rf ./data-bench; ./bin/ledgerd --dev --datadir ./data-bench --addr 127.0.0.1:18545 >/dev/null & l=$$!; \
	$(BRIDGE_NPM)/node_modules/.bin/anvil --port 18546 --silent & a=$$!; \
	./bin/ledger-bench --wait-up 20s --url http://127.0.0.1:18545 --compare http://127.0.0.1:18546 --scenario $(SCENARIO) \
		--ramp $(RAMP) --duration $(DURATION) --conns $(CONNS) --json bench-compare.json --svg bench-compare.svg; s=$$?; \
	kill $$l $$a; wait $$l $$a; rm -rf ./data-bench; exit $$s

clean:
	rm -rf bin data $(CLIENTS_JS)/node_modules $(BRIDGE_NPM)/node_modules $(UI_NPM)/node_modules
