package main

import (
	"fmt"

	"github.com/toolscout/toolscout/index/store"
)

// The data dir holds one folder of indexes per catalog set (index/store
// owns them: sets.go); the flags say which set a command uses, and the
// store opens its folder (store.Options.Set).

// set returns the flags' catalog set.
func (g *globalFlags) set() *store.Set {
	return &store.Set{Catalogs: g.catalogs, Configs: g.configs}
}

// setRoot returns the data dir a command opens its set in: for serve
// --read-only build, the folder the data dir led to when it was
// resolved (a symbolic link resolved once: what is served; running.build).
func (g *globalFlags) setRoot(build string) string {
	if g.readOnly && build != "" {
		return build
	}
	return g.dataDir
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
