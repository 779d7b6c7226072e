package keyword

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fault"
	bbolt "go.etcd.io/bbolt"
)

// keywordOpenTimeout bounds each step of opening the keyword index:
// checking its root.bolt, then Bleve's own open. Both take milliseconds
// on a whole index; one that answers in neither is taken for damaged.
const keywordOpenTimeout = 15 * time.Second

// boltLockTimeout is how long an open waits for the lock on root.bolt
// that another toolscout process holds (then: ErrLocked).
const boltLockTimeout = time.Second

// openBleve opens the keyword index at path within timeout (each step),
// a panic or a fault on its mapped files included in the errors (as
// ErrDamaged), read-only (a shared lock, nothing written) when readOnly.
// root.bolt is checked first (checkRootBolt), since bbolt trusts it
// enough to read past its end.
func openBleve(path string, timeout time.Duration, readOnly bool) (bleve.Index, error) {
	if err := fault.Bounded("check keyword index", timeout, nil, func() error {
		if err := checkRootBolt(filepath.Join(path, "store", "root.bolt")); err != nil {
			return err
		}
		return checkSegments(filepath.Join(path, "store"))
	}); err != nil {
		return nil, err
	}
	var idx bleve.Index
	err := fault.Bounded("open keyword index", timeout, func() {
		// Opened after all: nobody will use or close it.
		if idx != nil {
			idx.Close()
		}
	}, func() error {
		var err error
		config := map[string]any{"bolt_timeout": boltLockTimeout.String()}
		if readOnly {
			config["read_only"] = true
		}
		idx, err = bleve.OpenUsing(path, config)
		return err
	})
	if err != nil {
		return nil, err // idx belongs to the goroutine left running, if any
	}
	return idx, nil
}

// checkRootBolt checks a Bleve index's root.bolt with bbolt's own means
// before Bleve opens it: bbolt validates the meta pages (magic, version,
// checksum) and tells how far the last commit reaches (its high-water
// mark). bbolt maps the file and trusts the meta page: in a file cut
// short (a copy cut off, a full disk) it follows page numbers past the
// end, and Bleve then faults (a crash no recover catches), reads garbage
// for the index, or loops. A file shorter than its high-water mark is
// damaged. The file is opened read-only and with a shared lock: another
// process's exclusive one makes it wait boltLockTimeout, then answer
// bbolt.ErrTimeout.
func checkRootBolt(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // Bleve says what is missing
		}
		return err
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: boltLockTimeout})
	if err != nil {
		if errors.Is(err, bbolt.ErrTimeout) {
			return err
		}
		return fmt.Errorf("%w: %s: %v", index.ErrDamaged, path, err)
	}
	defer db.Close()
	return db.View(func(tx *bbolt.Tx) error {
		if need := tx.Size(); need > fi.Size() {
			return fmt.Errorf("%w: %s is cut short: %d bytes, where its last commit reaches %d", index.ErrDamaged, path, fi.Size(), need)
		}
		return nil
	})
}

// checkSegments checks the CRC-32 (IEEE) that ends each zap segment of a
// scorch index in dir, over the rest of the file: zap writes it, but
// checks it nowhere, so a changed byte would otherwise be read as
// postings or stored fields (or panic). At 10k tools (5.8 MB of
// segments) it takes 1-3 ms here (BENCHMARKS.md).
func checkSegments(dir string) error {
	segs, _ := filepath.Glob(filepath.Join(dir, "*.zap"))
	buf := make([]byte, 1<<20)
	for _, seg := range segs {
		if err := checkSegment(seg, buf); err != nil {
			return fmt.Errorf("%w: segment %s: %v", index.ErrDamaged, seg, err)
		}
	}
	return nil
}

func checkSegment(path string, buf []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < 4 {
		return errors.New("shorter than its checksum")
	}
	h := crc32.NewIEEE()
	if _, err := io.CopyBuffer(h, io.LimitReader(f, fi.Size()-4), buf); err != nil {
		return err
	}
	var sum [4]byte
	if _, err := io.ReadFull(f, sum[:]); err != nil {
		return err
	}
	if h.Sum32() != binary.BigEndian.Uint32(sum[:]) {
		return checksum.ErrMismatch
	}
	return nil
}
