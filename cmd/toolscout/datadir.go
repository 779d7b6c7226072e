package main

import (
	"errors"
	"fmt"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
)

// The data dir holds one folder of indexes per catalog set (index/store
// owns them: sets.go); the flags say which set a command uses.

// sources returns the sorted sources of the flags' catalog set.
func (g *globalFlags) sources() ([]string, error) { return store.SetSources(g.catalogs, g.configs) }

// storeDir returns the folder of the current set's indexes, creating it
// with its marker and recording its sources and last use. It refuses a
// sets/ or set folder that is a symbolic link.
func (g *globalFlags) storeDir() (string, error) {
	src, err := g.sources()
	if err != nil {
		return "", err
	}
	return store.SetDir(g.dataDir, src)
}

// readOnlyStoreDir returns the folder of the current set's indexes for
// serve --read-only: it must be there (toolscout index made it), and
// nothing in it is created or changed, sources.json included.
func (g *globalFlags) readOnlyStoreDir() (string, error) {
	src, err := g.sources()
	if err != nil {
		return "", err
	}
	root := g.dataDir
	if g.build != "" {
		root = g.build // the link resolved once: what is served
	}
	dir, err := store.ExistingSetDir(root, src)
	if errors.Is(err, index.ErrNoIndex) {
		return "", g.noIndex(err)
	}
	return dir, err
}

// noIndex says that the data dir has no index of the current catalog
// set for serve --read-only, and the command that builds it.
func (g *globalFlags) noIndex(err error) error {
	cmd := "toolscout index --data-dir " + g.dataDir
	for _, c := range g.catalogs {
		cmd += " --catalog " + c
	}
	return fmt.Errorf("--read-only: the data dir has no index of these catalogs to serve (%w); build it first with `%s` (the same --catalog files, the same --embedder)", err, cmd)
}

// prune removes the sets other than keep whose source files are gone or
// that were not used for 30 days, and the indexes of the data dir's old
// single-set layout (store.Prune).
func (g *globalFlags) prune(keep string) (removed, skipped []string, err error) {
	return store.Prune(g.dataDir, keep)
}
