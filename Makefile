# ledgerd — see README.md. Every target is cgo-free except test-race (the race
# detector needs cgo).
GO      ?= go
PKGS    := ./...
FUZZTIME ?= 20s
BENCHTIME ?= 300ms
BENCHCOUNT ?= 6
export GOFLAGS := -buildvcs=false

.PHONY: run build test test-unit test-race fmt vet lint fuzz bench stress clean clients

# run starts the dev venue with --compat: its users point ethers, viem and
# go-ethereum at it, and ethers cannot decode a receipt in the spec's shapes
# (README, "Client compatibility"). ./bin/ledgerd --dev alone serves the
# spec's shapes.
run: build
	./bin/ledgerd --dev --compat --datadir ./data

build:
	CGO_ENABLED=0 $(GO) build -o bin/ledgerd ./cmd/ledgerd

# test runs every test: formatting and vet, the whole suite cgo-free, then
# again under the race detector.
test: lint clients test-unit test-race

test-unit: clients
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 15m $(PKGS)

test-race: clients
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 20m $(PKGS)

# clients installs the pinned ethers and viem the client matrix runs
# (bench/clients); it needs node and npm.
CLIENTS_JS := bench/clients/js
clients: $(CLIENTS_JS)/node_modules/.package-lock.json

$(CLIENTS_JS)/node_modules/.package-lock.json: $(CLIENTS_JS)/package.json $(CLIENTS_JS)/package-lock.json
	npm ci --prefix $(CLIENTS_JS) --no-audit --no-fund

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	CGO_ENABLED=0 $(GO) vet $(PKGS)

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# fuzz runs every Fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list 'Fuzz.*' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; CGO_ENABLED=0 $(GO) test -run XXX -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench:
	CGO_ENABLED=0 $(GO) test -run XXX -bench . -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) $(PKGS)

# stress drives a running node (make run) over loopback; bounded in count and time.
stress: build
	CGO_ENABLED=0 $(GO) run ./bench/cmd/loadgen -duration 10s

clean:
	rm -rf bin data $(CLIENTS_JS)/node_modules
