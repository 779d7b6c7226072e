# toolscout: build, run and test. `make test` installs what it needs.
GO       ?= go
BIN      := bin/toolscout
PKGS     := ./...

.PHONY: all build run test tracked vet fmt-check unit npm bench eval generate clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/toolscout

# The main job on embedded defaults: serve the built-in catalog over
# Streamable HTTP on localhost (no config; Ollama is used only if it runs).
ADDR ?= 127.0.0.1:8080
run: build
	$(BIN) serve --http $(ADDR)

# Everything CI runs. npm ci installs the real MCP peers the end-to-end and
# gateway tests talk to (versions pinned in package-lock.json).
test: tracked fmt-check vet npm eval unit

npm: node_modules/.package-lock.json

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

# No executables, object files or files over 5 MB in the repository.
tracked:
	@bash .ci/check-tracked

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

# The quality table on the built-in dataset (the gate itself is TestBaseline).
eval: build
	$(BIN) eval --embedder builtin

generate:
	$(GO) generate ./index

clean:
	rm -rf bin
