# goha's build and test entry points. `make test` is what CI runs.
GO ?= go
BIN := bin

.PHONY: all build test deps vet unit regtests vtc clientnative fmt-check demo bench clean

all: build

build:
	$(GO) build -o $(BIN)/goha ./cmd/goha
	$(GO) build -o $(BIN)/gohactl ./cmd/gohactl

demo: build
	$(BIN)/goha

deps:
	./scripts/deps.sh

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet -tags regtest ./...

# Every Go test, with the race detector; regtests/ packages build and run
# the real binaries against real peers.
unit:
	$(GO) test -race -count=1 -tags regtest -timeout 20m ./...

# varnishtest reg-tests in HAProxy's format, against goha (and HAProxy).
vtc: build
	GOHA=$(BIN)/goha ./regtests/vtc/run.sh

# client-native (the Data Plane API's runtime client) against goha and
# HAProxy; a module of its own, so goha's go.mod does not depend on it.
clientnative:
	cd regtests/clientnative && $(GO) test ./...

test: deps fmt-check vet build unit vtc clientnative

bench: build
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200ms ./core/... ./ring/... ./runtime/...

clean:
	rm -rf $(BIN)
