# idemcheck — the two commands a newcomer needs: `make demo` and `make test`.
GO       ?= go
PKGS     ?= ./...
export TESTCONTAINERS_RYUK_DISABLED ?= true

.PHONY: all build demo test fmt-check vet lint-workflows race bench fuzz soak regression images gallery clean

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

# The benchmarks, about 11 minutes on a busy 2-core machine: the gateway
# simulator; the reference against its anchors (README, "What correct
# idempotency costs": charges/s and replays/s, each with the CPU per op it
# cost); the checker judging 10 k, 100 k and 1 M ops in one history
# (cpu-s/op, and B/kop, the memory a judgement allocates per thousand
# ops); then the reference certified for BENCH_SOAK (its peak memory,
# peak_MB, and its ops). BENCH_SOAK= skips the soak (then about 5 minutes).
BENCH_SOAK ?= 5m
bench:
	$(GO) test -run '^$$' -bench . -benchtime 3s ./gateway-sim/ ./reference/ ./checker/
	IDEMCHECK_SOAK=$(BENCH_SOAK) $(GO) test -run '^$$' -bench BenchmarkSoak -benchtime 1x -timeout 30m ./cmd/idemcheck/

# Fuzz every parser of input a user or a client hands us, one target after
# another, FUZZTIME each, on FUZZPARALLEL workers (docs/architecture.md,
# "Fuzzing the input parsers"). Not part of make test: there the seed
# corpora (testdata/fuzz/) run as plain tests. New interesting inputs are
# minimised for at most FUZZMINIMIZE each, so that minimising does not
# eat the run (Go's default is 60s). A run that fails with "context
# deadline exceeded" and writes no failing input is Go 1.26's coordinator
# racing its own deadline (golang/go#75804, fixed in Go 1.27): reported,
# not failed. Any other failure fails.
FUZZTIME     ?= 60s
FUZZMINIMIZE ?= 5s
FUZZPARALLEL ?= 1
FUZZ_TARGETS ?= target:FuzzParse scenarios:FuzzParseIncident reports:FuzzParseJSON \
	reference:FuzzParseCharge gateway-sim:FuzzChargeBody gateway-sim:FuzzSearchQuery gateway-sim:FuzzProviderPayment
fuzz:
	@log=$$(mktemp); trap 'rm -f $$log' EXIT; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t#*:}; corpus=$$pkg/testdata/fuzz/$$fn; \
		before=$$(ls $$corpus 2>/dev/null | wc -l); \
		echo "== $$fn (./$$pkg/), $(FUZZTIME)"; \
		if $(GO) test ./$$pkg/ -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) \
			-fuzzminimizetime $(FUZZMINIMIZE) -parallel $(FUZZPARALLEL) >$$log 2>&1; then tail -3 $$log; continue; fi; \
		cat $$log; \
		if grep -q '^    context deadline exceeded$$' $$log && [ "$$(ls $$corpus 2>/dev/null | wc -l)" = "$$before" ]; then \
			echo "   (no failing input: Go's fuzz coordinator raced its deadline, golang/go#75804; not a finding)"; continue; fi; \
		exit 1; \
	done

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

# The gallery (gallery/README.md): certify every entry at the default
# budget on each seed of GALLERY_SEEDS, keep each entry's shrunk incidents
# under gallery/<entry>/incidents/ and rewrite docs/gallery.md. An entry's
# failing verdict is its result, not an error of this target; the page
# generator fails when a check has no finding in gallery/gallery.yaml.
GALLERY_SEEDS   ?= 1
GALLERY_REPORTS ?= gallery-report
GALLERY_ENTRIES ?= $(shell sed -n 's/^  - name: //p' gallery/gallery.yaml)
gallery: build
	rm -rf $(GALLERY_REPORTS)
	@for s in $(GALLERY_SEEDS); do for e in $(GALLERY_ENTRIES); do \
	  echo "gallery: $$e seed $$s"; \
	  ./bin/idemcheck certify --target gallery/$$e/target.yaml --seed $$s --report-dir $(GALLERY_REPORTS)/$$e/seed-$$s >/dev/null; \
	  rc=$$?; [ $$rc -le 1 ] || [ $$rc -eq 3 ] || exit $$rc; \
	done; done
	$(GO) run ./gallery/gallerydoc -reports $(GALLERY_REPORTS) -out docs/gallery.md -incidents

# Container images for `certify --docker`, built locally (nothing is pulled).
images:
	bash images/build.sh

clean:
	rm -rf bin gallery/bin
