# idemcheck — the two commands a newcomer needs: `make demo` and `make test`.
GO       ?= go
PKGS     ?= ./...
export TESTCONTAINERS_RYUK_DISABLED ?= true

.PHONY: all build demo test fmt-check vet lint-workflows race bench soak regression images clean

all: build

build:
	$(GO) build -buildvcs=auto -o bin/ ./cmd/...

demo: build
	./bin/idemcheck demo

test: fmt-check vet lint-workflows race

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# One package at a time: the integration tests start PostgreSQL, toxiproxy
# and replicas, and timing-sensitive faults on 2 cores need the cores.
# The GitHub workflows, checked by actionlint at a pinned version (fetched
# through the Go module proxy on first use).
ACTIONLINT ?= github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
lint-workflows:
	$(GO) run $(ACTIONLINT) .github/workflows/*.yml

race:
	$(GO) test -race -p 1 -timeout 25m $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3s ./gateway-sim/ ./reference/ ./checker/

# The nightly soak: the reference through the mixed family; must find nothing.
SOAK ?= 5m
soak: build
	./bin/idemcheck run mixed --target reference --budget $(SOAK) --report-dir idemcheck-report/soak

# Replay the regression table, own incidents and the public catalogue
# (scenarios/incidents/public/), each against the member that has its bug,
# and say how many reproduced. Exit 1 is every incident reproducing (their
# checks FAILED, as expected); 4 is one that no longer reproduces, 3 one
# that could not be decided.
regression: build
	@./bin/idemcheck replay --all scenarios/incidents; rc=$$?; [ $$rc -le 1 ] || exit $$rc

# Container images for `certify --docker`, built locally (nothing is pulled).
images:
	bash images/build.sh

clean:
	rm -rf bin
