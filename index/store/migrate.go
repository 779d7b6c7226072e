package store

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/keyword"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fileio"
)

// The migration step: the one place that knows the earlier formats of a
// store folder's files. It runs when a store opens for writing, before
// the indexes open (openIndexes), so that every command that writes the
// data dir (index, serve, search, eval's caches) brings it along, and
// nothing reads a data dir the step has not seen; the readers know the
// current formats alone. A read-only open runs no step (it writes
// nothing): a folder the step has not stamped is refused, with the
// command that migrates it (checkFormat).
//
// The support window (docs/architecture.md, "Data dir formats and the
// migration window"): what
// toolscout wrote from 2026-11-24 on is migrated in place, nothing
// indexed, fitted or embedded again; anything older is removed and
// rebuilt from the catalog, with a warning (Healed). In this folder:
//
//   - keyword.bleve: format "3" (2026-11-24 on) is migrated by
//     keyword.Migrate; "1" and "2" are rebuilt.
//   - fit-*.bin: "TSFITV02" (2026-11-24, no checksum) gets its checksums;
//     "TSFITV01" (no sketch of its catalog, until 2026-11-24) is removed
//     and fitted again (migrateFits).
//   - vectors/: index/vector migrates its own earlier layouts when it
//     opens for writing (vector.Open, called next by openIndexes), as it
//     did before this step: chromem-go's folder per collection, the
//     two-file format, the snapshot formats before TSSNAP05.
//
// Each step leaves a whole folder when it is killed: the keyword index
// is migrated in one Bleve batch, a fit file is written atomically
// (temporary file, fsync, rename) or removed, and formatFile is written
// last, atomically. A folder killed mid-migration opens, and the next
// open for writing finishes the migration (each step is idempotent).

// dataFormat is the format of a store folder this toolscout writes and
// reads, kept in its formatFile. Bump it (and add a step here) when a
// file of the folder changes format.
const dataFormat = 1

// formatFile holds a store folder's dataFormat: written by the migration
// step once the folder is of it, read by every open.
const formatFile = ".toolscout-format"

// migrationSince is the oldest date of the formats the step migrates.
const migrationSince = "2026-11-24"

// ErrNewerFormat means a store folder written by a newer toolscout,
// whose formats this one does not know: nothing in it is changed.
var ErrNewerFormat = errors.New("data dir written by a newer toolscout")

// readFormat reads dir's formatFile: its format, and whether it is there
// and sound. One that is unreadable or fails its checksum is taken for
// missing: the step runs again, which changes nothing in a folder of the
// current format, and writes it again.
func readFormat(dir string) (int, bool) {
	f, err := os.Open(filepath.Join(dir, formatFile))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, 1024))
	if err != nil {
		return 0, false
	}
	body, err := checksum.Body(raw)
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(body), "\n")
	n, err := strconv.Atoi(line)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// writeFormat writes dir's formatFile (the format, a line for people,
// then a checksum: a flipped byte never reads as another format),
// atomically.
func writeFormat(dir string) error {
	text := fmt.Sprintf("%d\n# The format of the files of this folder, written by toolscout once they are all of it (see docs/architecture.md, \"Data dir formats and the migration window\").\n", dataFormat)
	if err := fileio.WriteFile(filepath.Join(dir, formatFile), checksum.Append([]byte(text)), 0o644); err != nil {
		return fmt.Errorf("data dir: record its format: %w", err)
	}
	return nil
}

// newer is the error of a folder of a newer format.
func newer(dir string, f int) error {
	return fmt.Errorf("%w: %s holds files of format %d, this toolscout knows format %d at most; nothing was changed: run the newer toolscout, or point --data-dir at another folder", ErrNewerFormat, dir, f, dataFormat)
}

// migrate brings the store folder dir to dataFormat (see above), and
// returns what it did, one line each, for Healed. killPoint, when set
// (tests), is called between the steps.
func migrate(dir string, killPoint func(step string)) (notes []string, err error) {
	f, ok := readFormat(dir)
	switch {
	case ok && f == dataFormat:
		return nil, nil
	case ok && f > dataFormat:
		return nil, newer(dir, f)
	}
	step := func(name string) {
		if killPoint != nil {
			killPoint(name)
		}
	}
	kw, err := keyword.Migrate(filepath.Join(dir, "keyword.bleve"))
	// Held by another process: the step is done by the next open that
	// gets the index (this one keeps its keyword index in memory).
	held := errors.Is(err, keyword.ErrLocked)
	if err != nil && !held {
		return nil, err
	}
	notes = append(notes, kw...)
	step("keyword")
	fits, err := migrateFits(dir, step)
	notes = append(notes, fits...)
	if err != nil || held {
		return notes, err
	}
	step("fits")
	if err := writeFormat(dir); err != nil {
		// Not fatal: the files are of the current format; the step
		// runs again (and finds nothing to do) at the next open.
		notes = append(notes, fmt.Sprintf("%v; the migration step runs again at the next open, and read-only opens refuse the folder until then", err))
	}
	return notes, nil
}

// checkFormat is a read-only open's check of the store folder dir: one
// the migration step has not stamped (with indexes in it) is
// index.ErrNoIndex, with the command that migrates it; one of a newer
// toolscout is ErrNewerFormat.
func checkFormat(dir string) error {
	f, ok := readFormat(dir)
	switch {
	case ok && f > dataFormat:
		return newer(dir, f)
	case ok && f == dataFormat:
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "keyword.bleve")); err != nil {
		return nil // no index: the open says so
	}
	return fmt.Errorf("%w: %s was written by an earlier toolscout and not yet migrated (no %s of format %d); run toolscout index on this data dir once (it migrates the data dir in place, nothing embedded again), then open it read-only again", index.ErrNoIndex, dir, formatFile, dataFormat)
}

// The fit files' earlier headers (fitfile.go has the current one).
const (
	fitHeaderV1 = "TSFITV01" // no sketch of the catalog: outside the window
	fitHeaderV2 = "TSFITV02" // fitHeader's body without the checksums
)

// migrateFits brings the fit files of dir to fitHeader: a "TSFITV02"
// file is written again with its checksums (atomically), a "TSFITV01"
// file is removed (the next sync fits the statistics again). step is
// called after each file.
func migrateFits(dir string, step func(string)) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "fit-*.bin"))
	if err != nil {
		return nil, err
	}
	var notes []string
	for _, f := range files {
		head, err := fileHead(f, len(fitHeader))
		if err != nil {
			continue // gone, or unreadable: RestoreFit says so
		}
		switch head {
		case fitHeaderV2:
			data, err := os.ReadFile(f)
			if err != nil || !strings.HasPrefix(string(data[:min(len(data), len(fitHeaderV2))]), fitHeaderV2) {
				// Gone, or migrated by another process opening the
				// folder since its head was read.
				continue
			}
			if err := fileio.WriteAtomic(f, func(w *bufio.Writer) error {
				return checksum.Write(w, func(bw *bufio.Writer) error {
					bw.WriteString(fitHeader)
					_, err := bw.Write(data[len(fitHeaderV2):])
					return err
				})
			}); err != nil {
				return notes, fmt.Errorf("migrate %s: %w", f, err)
			}
			notes = append(notes, fmt.Sprintf("the built-in embedder's statistics %s: migrated from %s of an earlier toolscout to %s (checksums added); not fitted again", f, fitHeaderV2, fitHeader))
		case fitHeaderV1:
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return notes, fmt.Errorf("migrate %s: %w", f, err)
			}
			notes = append(notes, fmt.Sprintf("the built-in embedder's statistics %s: format %s is from a toolscout before %s, older than the formats this one migrates; removed, fitted again at the next sync", f, fitHeaderV1, migrationSince))
		default:
			continue
		}
		step("fit " + filepath.Base(f))
	}
	return notes, nil
}

// fileHead returns the first n bytes of the file f ("" when it is
// shorter).
func fileHead(f string, n int) (string, error) {
	r, err := os.Open(f)
	if err != nil {
		return "", err
	}
	defer r.Close()
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", nil
	}
	return string(b), nil
}

// The data dir's earlier layouts, migrated by migrateDataDir when a
// catalog set's folder opens for writing (OpenWith with Set), before it:
//
//   - DATA_DIR/keyword.bleve and DATA_DIR/vectors: the layout before
//     catalog sets (toolscout before 0.3.0, until 2026-11-22), outside
//     the window: removed when they hold only what toolscout wrote there
//     (legacyKeyword, legacyVectors); each set's indexes are built from
//     its catalog in its own folder. Anything else there is left alone.
//   - a set folder without its marker (made before 2026-11-24) but with
//     the sources.json toolscout wrote: marked (markSet), so that
//     --prune, which knows sets by their marker alone, can remove it.
//
// Both are safe to kill: a removal half done leaves a folder that
// --prune or the next open removes, a marker is its name.

// migrateDataDir migrates the layouts of dataDir (above) and says what
// it did, one line each. It changes nothing it cannot tell toolscout
// wrote, and follows no symbolic link; what it cannot remove or mark is
// said, and does not stop the open.
func migrateDataDir(dataDir string) []string {
	var notes []string
	for _, legacy := range []struct {
		name string
		sig  func(string) string
	}{{"keyword.bleve", legacyKeyword}, {"vectors", legacyVectors}} {
		p := filepath.Join(dataDir, legacy.name)
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() || legacy.sig(p) != "" {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			notes = append(notes, fmt.Sprintf("%s: the index of the layout before catalog sets (toolscout before 0.3.0) could not be removed: %v", p, err))
			continue
		}
		notes = append(notes, fmt.Sprintf("%s: the index of the layout before catalog sets (toolscout before 0.3.0, older than the formats this one migrates) removed; each catalog set's indexes are built from its catalog in its own folder under sets/", p))
	}
	sets := filepath.Join(dataDir, "sets")
	if fi, err := os.Lstat(sets); err != nil || !fi.IsDir() {
		return notes
	}
	entries, err := os.ReadDir(sets)
	if err != nil {
		return notes
	}
	for _, e := range entries {
		dir := filepath.Join(sets, e.Name())
		if !e.IsDir() || !setID.MatchString(e.Name()) {
			continue // a link, a file, another name: not a set
		}
		if _, err := os.Lstat(filepath.Join(dir, setMarker)); err == nil {
			continue
		}
		var src setSources
		data, err := os.ReadFile(filepath.Join(dir, "sources.json"))
		if err != nil || json.Unmarshal(data, &src) != nil || len(src.Sources) == 0 || src.LastUsed.IsZero() {
			continue // not toolscout's
		}
		if err := markSet(dir); err != nil {
			notes = append(notes, fmt.Sprintf("%s: a catalog set made before its marker could not be marked (%v); --prune leaves it alone", dir, err))
			continue
		}
		notes = append(notes, fmt.Sprintf("%s: a catalog set made before the set marker (before 2026-11-24) marked as toolscout's", dir))
	}
	return notes
}

// legacyKeyword says why dir is not a keyword index of the layout before
// catalog sets, or "" when it is. toolscout wrote a Bleve scorch index
// there: index_meta.json naming scorch, and store/ holding root.bolt and
// .zap segments, nothing else.
func legacyKeyword(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	for _, e := range entries {
		if (e.Name() != "index_meta.json" || !e.Type().IsRegular()) && (e.Name() != "store" || !e.IsDir()) {
			return "it holds " + e.Name() + ", which Bleve does not write"
		}
	}
	var meta struct {
		IndexType string `json:"index_type"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "index_meta.json"))
	if err != nil || json.Unmarshal(data, &meta) != nil || meta.IndexType != "scorch" {
		return "no index_meta.json of a Bleve scorch index"
	}
	store, err := os.ReadDir(filepath.Join(dir, "store"))
	if err != nil {
		return "no store/ of a Bleve scorch index"
	}
	for _, e := range store {
		if !e.Type().IsRegular() || e.Name() != "root.bolt" && !strings.HasSuffix(e.Name(), ".zap") {
			return "its store/ holds " + e.Name() + ", which Bleve does not write"
		}
	}
	return ""
}

// chromemName matches the file and folder names of chromem-go's
// persistent layout: 8 hex digits of a SHA-256 of a name.
var chromemName = regexp.MustCompile(`^[0-9a-f]{8}(\.gob)?$`)

// legacyVectors says why dir is not a vector store of the layout before
// catalog sets, or "" when it is. toolscout wrote chromem-go's persistent
// layout there: a folder per collection (8 hex digits), each holding
// 00000000.gob (its name) and one 8-hex-digit .gob file per tool.
func legacyVectors(dir string) string {
	cols, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	for _, c := range cols {
		if !c.IsDir() || !chromemName.MatchString(c.Name()) || strings.HasSuffix(c.Name(), ".gob") {
			return "it holds " + c.Name() + ", which chromem-go does not write"
		}
		files, err := os.ReadDir(filepath.Join(dir, c.Name()))
		if err != nil {
			return err.Error()
		}
		for _, f := range files {
			if !f.Type().IsRegular() || !strings.HasSuffix(f.Name(), ".gob") || !chromemName.MatchString(f.Name()) {
				return "it holds " + filepath.Join(c.Name(), f.Name()) + ", which chromem-go does not write"
			}
		}
	}
	return ""
}
