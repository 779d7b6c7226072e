package keyword

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	bbolt "go.etcd.io/bbolt"
)

// The keyword index's earlier formats, known here alone: Migrate brings
// an index of them to keywordFormat, and the readers (Open,
// OpenReadOnly, Sync) know only that.
//
// Format "3" (from 2026-11-24, b0abe07, to this version): the same
// fields and documents as keywordFormat; its manifest may start with
// manifestHeaderV1 (no line has the tool's lengths, which a line may
// lack in the current format too) and its field lengths may be stored
// as JSON alone, before they carried a checksum (lengthsHeader). Both
// are rewritten, with the new format, in one Bleve batch: a kill leaves
// the index of format "3" whole, and the next open migrates it again.
//
// Any other format ("1" and "2", up to 2026-11-24, held other fields;
// an index without a format is not toolscout's) is outside the window:
// Migrate removes the index and Open builds it again from the catalog
// (under a second at 10k tools).
const (
	migratableFormat = "3"
	manifestHeaderV1 = "TSKWM01\n"
)

// Migrate brings the keyword index at path to the current format when
// an earlier toolscout wrote it (index/store's migration step calls it
// before Open), and says in notes what it did: an index of format "3"
// is converted in place, nothing re-indexed; one older than that is
// removed, for Open to rebuild from the catalog. A missing or damaged
// index is left to Open (which creates or heals it). An index another
// process holds is an error wrapping ErrLocked, and nothing is changed.
func Migrate(path string) (notes []string, err error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	idx, err := openBleve(path, keywordOpenTimeout, false)
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, fmt.Errorf("migrate keyword index %s: %w (another toolscout process holds it)", path, ErrLocked)
	}
	if err != nil {
		return nil, nil // damaged: Open heals it
	}
	format, ferr := idx.GetInternal([]byte(formatKey))
	switch {
	case ferr == nil && string(format) == keywordFormat:
		return nil, idx.Close()
	case ferr == nil && string(format) == migratableFormat:
		note, err := migrateFormat3(idx)
		if cerr := idx.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("migrate keyword index %s: %w", path, err)
		}
		return []string{fmt.Sprintf("keyword index %s: migrated from format %s of an earlier toolscout to format %s (%s); nothing indexed again", path, migratableFormat, keywordFormat, note)}, nil
	}
	idx.Close()
	why := fmt.Sprintf("its format %q is from a toolscout before 2026-11-24, older than the formats this one migrates", format)
	if ferr != nil {
		why = fmt.Sprintf("its format cannot be read (%v)", ferr)
	}
	if err := os.RemoveAll(path); err != nil {
		return nil, fmt.Errorf("keyword index %s: %s; removing it to rebuild failed: %w", path, why, err)
	}
	return []string{fmt.Sprintf("keyword index %s: %s; removed, rebuilt from the catalog", path, why)}, nil
}

// migrateFormat3 rewrites a format "3" index's manifest and field
// lengths in the current format, and its format, in one batch; it says
// what it changed.
func migrateFormat3(idx bleve.Index) (string, error) {
	b := idx.NewBatch()
	note := "format only"
	raw, err := idx.GetInternal([]byte(manifestKey))
	if err != nil {
		return "", err
	}
	if rest, ok := bytes.CutPrefix(raw, []byte(manifestHeaderV1)); ok {
		b.SetInternal([]byte(manifestKey), append([]byte(manifestHeader), rest...))
		note = "manifest " + manifestHeaderV1[:len(manifestHeaderV1)-1]
	}
	// Any other manifest is current, empty, or damaged, which Sync
	// heals (every document taken for out of date).
	raw, err = idx.GetInternal([]byte(lengthsKey))
	if err != nil {
		return "", err
	}
	if len(raw) > 0 && !bytes.HasPrefix(raw, []byte(lengthsHeader)) {
		// Unreadable ones are left: Open finds them damaged and
		// rebuilds the index.
		var st search.BM25Stats
		if json.Unmarshal(raw, &st) == nil {
			completeLengths(&st)
			js, err := json.Marshal(&st)
			if err != nil {
				return "", err
			}
			b.SetInternal([]byte(lengthsKey), sealLengths(js))
			note += ", field lengths sealed with a checksum"
		}
	}
	b.SetInternal([]byte(formatKey), []byte(keywordFormat))
	return note, idx.Batch(b)
}
