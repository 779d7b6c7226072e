package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/fileio"
)

// The data dir holds one folder of indexes per catalog set, so that a
// server on the built-in catalog and an `index --catalog other.json` on the
// same data dir never delete each other's vectors, and switching back and
// forth re-embeds nothing:
//
//	DATA_DIR/sets/<id>/.toolscout-set, keyword.bleve, vectors/, sources.json
//
// A set is identified by its sources (the built-in catalog, or the
// absolute paths of its --catalog and --config files), not their content:
// edits to a file stay incremental inside its set.
//
// toolscout deletes only what it created: --prune removes a set folder
// only when it carries setMarker, and never follows a symbolic link out of
// the data dir (the data dir itself may be one: the user named it).

// setMarker is the file that toolscout writes in each set folder it
// creates, before anything else; --prune removes only folders holding it.
const setMarker = ".toolscout-set"

const setMarkerText = "This folder was created by toolscout for one catalog set (see sources.json).\n`toolscout index --prune` removes it once its sources are gone or unused for 30 days.\n"

// setSources names the sources of the current catalog set.
type setSources struct {
	Sources  []string  `json:"sources"`
	LastUsed time.Time `json:"last_used"`
}

// sourcesOf returns the sorted sources of a catalog set: "catalog" and
// the absolute path of each catalog file, "config" and that of each
// config file, or "builtin" when there are none. A set is identified by
// its sources, not their content: edits to a file stay incremental
// inside its set.
func sourcesOf(catalogs, configs []string) ([]string, error) {
	var out []string
	for _, c := range catalogs {
		abs, err := filepath.Abs(c)
		if err != nil {
			return nil, err
		}
		out = append(out, "catalog "+abs)
	}
	for _, c := range configs {
		abs, err := filepath.Abs(c)
		if err != nil {
			return nil, err
		}
		out = append(out, "config "+abs)
	}
	if len(out) == 0 {
		out = []string{"builtin"}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// setDir returns the folder of the indexes of the catalog set of sources
// src (sourcesOf) in dataDir, creating it with its marker and recording
// its sources and last use. It refuses a sets/ or set folder that is a
// symbolic link.
func setDir(dataDir string, src []string) (string, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", fmt.Errorf("data dir: %w", err)
	}
	sets := filepath.Join(dataDir, "sets")
	if _, err := ownFolder(sets); err != nil {
		return "", err
	}
	dir := setPath(dataDir, src)
	created, err := ownFolder(dir)
	if err != nil {
		return "", err
	}
	if err := markSet(dir); err != nil && created {
		// A set folder without its marker would never be pruned.
		os.Remove(dir)
		return "", fmt.Errorf("data dir: %w", err)
	}
	recordUse(dir, src)
	return dir, nil
}

// useGrain is how old the last use sources.json records may be before an
// open of the set records it again: --prune counts in days (pruneAge),
// and writing it at every open (a synced write and a rename) was the
// longest step of a server's start before it read its catalog (17 ms on
// a loaded machine).
const useGrain = time.Hour

// recordUse writes dir's sources.json: its sources src and the time of
// this use, unless it names src already with a use less than useGrain
// ago.
func recordUse(dir string, src []string) {
	path := filepath.Join(dir, "sources.json")
	var cur setSources
	if f, err := os.Open(path); err == nil {
		// A file of toolscout's is small: more is not one.
		err = json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&cur)
		f.Close()
		if age := time.Since(cur.LastUsed); err == nil && slices.Equal(cur.Sources, src) && age >= 0 && age < useGrain {
			return
		}
	}
	data, _ := json.MarshalIndent(setSources{Sources: src, LastUsed: time.Now().UTC()}, "", "  ")
	// Best effort: the file only helps --prune and people. Written whole
	// or not at all, under a temporary name of its own: two processes
	// opening the set at once do not write into each other's.
	fileio.WriteFile(path, data, 0o644)
}

// setFolder returns the folder of set in dataDir: setDir, or read-only
// existingSetDir.
func setFolder(dataDir string, set Set, readOnly bool) (string, error) {
	src, err := sourcesOf(set.Catalogs, set.Configs)
	if err != nil {
		return "", err
	}
	if readOnly {
		return existingSetDir(dataDir, src)
	}
	return setDir(dataDir, src)
}

// checkWritable creates dataDir unless it is there and checks that a
// file can be written in it (Options.CheckWritable).
func checkWritable(dataDir string) error {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dataDir, ".doctor")
	if err != nil {
		return err
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// setPath is the folder of the set of sources src in dataDir.
func setPath(dataDir string, src []string) string {
	sum := sha256.Sum256([]byte(strings.Join(src, "\n")))
	return filepath.Join(dataDir, "sets", hex.EncodeToString(sum[:6]))
}

// existingSetDir returns the folder of the indexes of the catalog set of
// sources src in dataDir for a read-only store: it must be there (a
// writer made it; else an error wrapping index.ErrNoIndex), and nothing
// in it is created or changed, sources.json included.
func existingSetDir(dataDir string, src []string) (string, error) {
	dir := setPath(dataDir, src)
	for _, p := range []string{filepath.Join(dataDir, "sets"), dir} {
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("%w: %s is missing", index.ErrNoIndex, p)
		case err != nil:
			return "", fmt.Errorf("data dir: %w", err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return "", fmt.Errorf("data dir: %s is a symbolic link: toolscout reads its indexes only from folders it created; point --data-dir at the folder you want", p)
		case !fi.IsDir():
			return "", fmt.Errorf("data dir: %s is not a folder", p)
		}
	}
	return dir, nil
}

// ownFolder creates the folder p unless it exists, and reports whether it
// did. It refuses a p that is a symbolic link or not a folder: toolscout
// writes (and later prunes) only inside folders it created.
func ownFolder(p string) (created bool, err error) {
	err = os.Mkdir(p, 0o755)
	created = err == nil
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("data dir: %w", err)
	}
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return false, fmt.Errorf("data dir: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return false, fmt.Errorf("data dir: %s is a symbolic link: toolscout keeps its indexes only in folders it creates; remove the link, or point --data-dir at the folder you want", p)
	case !fi.IsDir():
		return false, fmt.Errorf("data dir: %s is not a folder: move it away", p)
	}
	return created, nil
}

// markSet writes the set marker into dir unless it is there. It never
// writes through a link: O_EXCL refuses any existing name.
func markSet(dir string) error {
	p := filepath.Join(dir, setMarker)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			return nil
		}
		return fmt.Errorf("mark catalog set: %s is not a file", p)
	}
	if err != nil {
		return fmt.Errorf("mark catalog set: %w", err)
	}
	// Even cut short, the file marks the set: its name is what counts.
	_, err = f.WriteString(setMarkerText)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("mark catalog set: %w", err)
	}
	return nil
}

// pruneAge is how long a set may go unused before --prune removes it.
const pruneAge = 30 * 24 * time.Hour

// setID matches the name of a set folder (see setPath).
var setID = regexp.MustCompile(`^[0-9a-f]{12}$`)

// Prune removes the other sets of the store's data dir whose source
// files are gone or that were not used for pruneAge. It returns what it
// removed, and what it left alone because toolscout did not create it
// (no marker, a symbolic link, a folder that is not toolscout's), each
// with the reason. (The indexes of the layout before catalog sets are
// the migration step's: migrateDataDir.) The store must have been opened for writing as a catalog
// set's folder (Options.Set): its own set is kept.
func (s *Store) Prune() (removed, skipped []string, err error) {
	if s.dataDir == "" || s.readOnly {
		return nil, nil, fmt.Errorf("prune %s: only a store opened for writing as a catalog set of a data dir prunes the other sets", s.dir)
	}
	return prune(s.dataDir, s.dir)
}

// prune removes the sets in dataDir other than the one in the folder
// keep (Prune).
func prune(dataDir, keep string) (removed, skipped []string, err error) {
	root, err := filepath.EvalSymlinks(dataDir)
	if err != nil {
		return nil, nil, nil // no data dir: nothing to prune
	}
	// Work on the real paths (root resolved once); show the user's.
	show := func(rel ...string) string { return filepath.Join(append([]string{dataDir}, rel...)...) }
	remove := func(rel ...string) error {
		p := filepath.Join(append([]string{root}, rel...)...)
		// Containment: nothing on the way is a link (swapped in since
		// the checks), so RemoveAll stays inside the data dir.
		if real, err := filepath.EvalSymlinks(p); err != nil || real != p {
			return fmt.Errorf("%s moved or became a symbolic link while pruning; left alone", show(rel...))
		}
		return os.RemoveAll(p)
	}
	setsDir := filepath.Join(root, "sets")
	fi, err := os.Lstat(setsDir)
	switch {
	case err != nil:
		return removed, skipped, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		return removed, append(skipped, show("sets")+" (a symbolic link: toolscout never follows links out of the data dir)"), nil
	case !fi.IsDir():
		return removed, append(skipped, show("sets")+" (not a folder)"), nil
	}
	sets, err := os.ReadDir(setsDir)
	if err != nil {
		return removed, skipped, nil
	}
	for _, e := range sets {
		if e.Name() == filepath.Base(keep) {
			continue
		}
		dir := filepath.Join(setsDir, e.Name())
		if why := ownedSet(dir, e.Name()); why != "" {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", show("sets", e.Name()), why))
			continue
		}
		why := ""
		var s setSources
		data, err := os.ReadFile(filepath.Join(dir, "sources.json"))
		switch {
		case err != nil || json.Unmarshal(data, &s) != nil:
			why = "no readable sources.json"
		case time.Since(s.LastUsed) > pruneAge:
			why = fmt.Sprintf("unused since %s", s.LastUsed.Format("2006-01-02"))
		default:
			for _, src := range s.Sources {
				if kind, path, ok := strings.Cut(src, " "); ok && kind != "builtin" {
					if _, err := os.Stat(path); err != nil {
						why = path + " is gone"
						break
					}
				}
			}
		}
		if why == "" {
			continue
		}
		if err := remove("sets", e.Name()); err != nil {
			return removed, skipped, err
		}
		removed = append(removed, fmt.Sprintf("%s (%s: %s)", show("sets", e.Name()), strings.Join(s.Sources, ", "), why))
	}
	return removed, skipped, nil
}

// ownedSet says why the entry name of sets/ at dir is not a set folder
// that toolscout created, or "" when it is: a real folder (not a link)
// named like a set, holding the set marker (sets made before the marker
// get it from the migration step: migrateDataDir).
func ownedSet(dir, name string) string {
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return err.Error()
	case fi.Mode()&fs.ModeSymlink != 0:
		return "a symbolic link: toolscout never follows links out of the data dir"
	case !fi.IsDir():
		return "not a folder"
	case !setID.MatchString(name):
		return "not named like a catalog set"
	}
	if fi, err := os.Lstat(filepath.Join(dir, setMarker)); err == nil && fi.Mode().IsRegular() {
		return ""
	}
	return "no " + setMarker + ": toolscout did not create it"
}
