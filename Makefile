# toolscout: build, run and test. `make test` installs what it needs.
GO       ?= go
BIN      := bin/toolscout
PKGS     := ./...

.PHONY: all build run test vet fmt-check race unit bench generate clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/toolscout

# The main job on embedded defaults: the built-in catalog, no config, no Ollama.
run: build
	$(BIN) search "who is on call for payments tonight"

test: fmt-check vet unit

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# -race everywhere: the indexes embed concurrently and the engine is shared.
unit:
	$(GO) test -race -count=1 $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./index ./search ./embed

generate:
	$(GO) generate ./index

clean:
	rm -rf bin
