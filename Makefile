# goha's build and test entry points. `make test` is what CI runs.
GO ?= go
BIN := bin

.PHONY: all build test deps vet unit regtests vtc haproxy-regtests haproxy-regtests-list clientnative fmt-check demo bench clean

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

# HAProxy 2.6.0's own reg-tests (../shared/haproxy-regtests-2.6.0, not part
# of the project) against goha. `haproxy-regtests` runs every test HAProxy
# passes here and adds those goha passes to the project's list;
# `haproxy-regtests-list` runs that list, which must pass (CI).
HRT_LIST := regtests/haproxy/passing.txt

haproxy-regtests: build
	GOHA=$(BIN)/goha ./scripts/haproxy-regtests.sh -j 3 --update $(HRT_LIST) || true
	@echo "$$(grep -c . $(HRT_LIST)) tests in $(HRT_LIST)"

# One test at a time: the list takes seconds, and tests that check the order
# of log lines across clients (log/load_balancing) are not run beside others
# that load the machine.
haproxy-regtests-list: build
	GOHA=$(BIN)/goha ./scripts/haproxy-regtests.sh -j 1 --list $(HRT_LIST)

# client-native (the Data Plane API's runtime client) against goha and
# HAProxy; a module of its own, so goha's go.mod does not depend on it.
clientnative:
	cd regtests/clientnative && $(GO) test ./...

test: deps fmt-check vet build unit vtc haproxy-regtests-list clientnative

bench: build
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200ms ./core/... ./ring/... ./runtime/...

clean:
	rm -rf $(BIN)
