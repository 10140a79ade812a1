# ledgerd — see README.md. Every target is cgo-free except test-race (the race
# detector needs cgo).
GO      ?= go
PKGS    := ./...
FUZZTIME ?= 20s
BENCHTIME ?= 300ms
BENCHCOUNT ?= 6
export GOFLAGS := -buildvcs=false

.PHONY: run build test test-unit test-race fmt vet lint fuzz bench stress clean

run: build
	./bin/ledgerd --dev --datadir ./data

build:
	CGO_ENABLED=0 $(GO) build -o bin/ledgerd ./cmd/ledgerd

# test runs every test: formatting and vet, the whole suite cgo-free, then
# again under the race detector.
test: lint test-unit test-race

test-unit:
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 15m $(PKGS)

test-race:
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 20m $(PKGS)

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
	rm -rf bin data
