# idemcheck — the two commands a newcomer needs: `make demo` and `make test`.
GO       ?= go
PKGS     ?= ./...
export TESTCONTAINERS_RYUK_DISABLED ?= true

.PHONY: all build demo test fmt-check vet race bench soak clean

all: build

build:
	$(GO) build -o bin/ ./cmd/...

demo: build
	./bin/idemcheck demo

test: fmt-check vet race

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

race:
	$(GO) test -race -timeout 20m $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3s ./gateway-sim/ ./reference/ ./checker/

clean:
	rm -rf bin
