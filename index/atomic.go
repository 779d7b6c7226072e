package index

import (
	"bufio"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes path through write: into a temporary file beside
// it (named path + ".tmp-*", which OpenVectors clears after a kill), synced,
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
