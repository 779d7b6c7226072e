package index

import (
	"bufio"
	"os"
	"path/filepath"
	"time"
)

// WriteFileAtomic writes path through write: into a temporary file beside
// it (named path + ".tmp-*", which removeLeftoverTemps clears after a kill), synced,
// then renamed over path, so that a reader or a kill sees either the old
// file whole or the new one.
func WriteFileAtomic(path string, write func(w *bufio.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+tmpSuffix+"*")
	if err != nil {
		return err
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

// leftoverAge is how long a temporary file goes unmodified before the
// next open takes it for a kill's leftover. Another process sharing the
// data dir may be writing one right now (its mtime moves with every
// write); a whole collection or catalog.bin is written in seconds.
const leftoverAge = time.Minute

// removeLeftoverTemps removes the temporary files in dir that a kill
// during WriteFileAtomic left behind (the previous version of their file
// is still whole). Recent ones are kept: they may be another process's
// write in progress.
func removeLeftoverTemps(dir string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, "*"+tmpSuffix+"*"))
	for _, t := range tmps {
		if fi, err := os.Stat(t); err == nil && time.Since(fi.ModTime()) >= leftoverAge {
			os.Remove(t)
		}
	}
}
