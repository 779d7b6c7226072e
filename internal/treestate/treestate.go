// Package treestate records what a folder holds (every file and folder
// with its size, mode and modification time), for tests that check that
// a process left a data dir as it found it.
//
//	before, err := treestate.Of(dir)
//	// ... run what must not write ...
//	after, err := treestate.Of(dir)
//	for _, d := range treestate.Diff(before, after) {
//		t.Error(d)
//	}
//
// WithContents adds a hash of each file's bytes, for a check that a
// write which kept a file's size and time is seen too.
package treestate

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Of returns, for every file and folder under dir (dir included), its
// size, mode and modification time.
func Of(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%d bytes, %v, modified %d", fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		return nil
	})
	return out, err
}

// WithContents is Of with a SHA-256 of each file's bytes beside its
// size, mode and time: for small folders (it reads every file whole).
func WithContents(dir string) (map[string]string, error) {
	out, err := Of(dir)
	if err != nil {
		return nil, err
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] += fmt.Sprintf(", sha256 %x", sha256.Sum256(data))
		return nil
	})
	return out, err
}

// Diff says, one line each and sorted, what was created, removed or
// changed between two states of a folder; nothing when they are equal.
func Diff(before, after map[string]string) []string {
	var out []string
	for p, b := range before {
		if a, ok := after[p]; !ok {
			out = append(out, p+" was removed")
		} else if a != b {
			out = append(out, fmt.Sprintf("%s changed: %s, was %s", p, a, b))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, p+" was created")
		}
	}
	sort.Strings(out)
	return out
}
