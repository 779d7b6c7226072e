// Package fileio writes files atomically and maps them read-only: the
// file handling every file toolscout keeps in its data dir goes through.
//
// Place in the flow: below everything that writes a file. index/store
// writes the catalog cache, fit files and upstream tools with
// [WriteAtomic], index/vector its collections and snapshots; the catalog
// cache and vector snapshots are read with [ReadMapped].
package fileio

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"time"
)

// TmpSuffix marks a temporary file that WriteAtomic writes before it
// renames it: path + TmpSuffix + a random number.
const TmpSuffix = ".tmp-"

// WriteAtomic writes path through write: into a temporary file beside
// it (named path + TmpSuffix + "*", which RemoveLeftoverTemps clears after a kill), synced,
// then renamed over path, so that a reader or a kill sees either the old
// file whole or the new one.
func WriteAtomic(path string, write func(w *bufio.Writer) error) error {
	return writeAtomic(path, 0, write)
}

// WriteFile writes data to path as WriteAtomic does, the file with mode
// perm (WriteAtomic's are 0600, for the data dir): for a file a user
// reads, a report or a generated asset.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return writeAtomic(path, perm, func(w *bufio.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func writeAtomic(path string, perm os.FileMode, write func(w *bufio.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+TmpSuffix+"*")
	if err != nil {
		return err
	}
	if perm != 0 {
		if err := tmp.Chmod(perm); err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			return err
		}
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up after an error
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}

// LeftoverAge is how long a temporary file goes unmodified before the
// next open takes it for a kill's leftover. Another process sharing the
// data dir may be writing one right now (its mtime moves with every
// write); a whole collection or catalog.bin is written in seconds.
const LeftoverAge = time.Minute

// RemoveLeftoverTemps removes the temporary files in dir that a kill
// during WriteAtomic left behind (the previous version of their file
// is still whole). Recent ones are kept: they may be another process's
// write in progress.
func RemoveLeftoverTemps(dir string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, "*"+TmpSuffix+"*"))
	for _, t := range tmps {
		if fi, err := os.Stat(t); err == nil && time.Since(fi.ModTime()) >= LeftoverAge {
			os.Remove(t)
		}
	}
}

// SyncDir makes the renames in dir survive a power cut.
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// ErrLocked is wrapped by Lock's error when another process held the
// lock for the whole wait.
var ErrLocked = errors.New("locked by another process")
