package index

import (
	_ "embed"
	"sync"
)

//go:generate go run ../cmd/gencatalog -in builtin/catalog.src -out builtin/catalog.json

//go:embed builtin/catalog.json
var builtinCatalogJSON []byte

// BuiltinCatalogJSON returns the built-in catalog file's bytes.
func BuiltinCatalogJSON() []byte { return builtinCatalogJSON }

var builtinOnce = sync.OnceValues(func() (*Catalog, error) {
	specs, err := BuiltinSpecs()
	if err != nil {
		return nil, err
	}
	return NewCatalog(specs)
})

// BuiltinSpecs returns the built-in catalog's domains, to merge with others.
func BuiltinSpecs() ([]DomainSpec, error) { return BuiltinSource().Specs() }

// BuiltinCatalog returns the catalog that ships inside the binary: over 300
// tools across 26 domains modelled on the MCP servers people run.
func BuiltinCatalog() (*Catalog, error) { return builtinOnce() }
