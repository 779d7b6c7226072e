package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/toolscout/toolscout/internal/fileio"
)

// What connect changed, so that connect --undo can put it back: the
// backups it made and the state file beside toolscout's config that
// lists them (connectStateFile).

// connectStateFile is the state file's name, in the folder of
// toolscout's config.
const connectStateFile = "connect-state.json"

// backupSuffix starts the name of a backup: FILE.toolscout-backup-TIME.
const backupSuffix = ".toolscout-backup-"

// connectState lists the connects not undone, oldest first.
type connectState struct {
	Runs []connectRun `json:"runs"`
}

// connectRun is one connect: the client and the files it changed.
type connectRun struct {
	Client string        `json:"client"`
	Time   time.Time     `json:"time"`
	Files  []changedFile `json:"files"`
}

// changedFile is a file connect wrote: its backup (none when connect
// created it) and the SHA-256 of what connect wrote, to tell whether
// someone changed it since.
type changedFile struct {
	Path    string `json:"path"`
	Backup  string `json:"backup,omitempty"`
	Created bool   `json:"created,omitempty"`
	SHA256  string `json:"sha256"`
}

func statePath(toolscoutConfig string) string {
	return filepath.Join(filepath.Dir(toolscoutConfig), connectStateFile)
}

func readConnectState(path string) (*connectState, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &connectState{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("connect state: %w", err)
	}
	var st connectState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("connect state %s: %w", path, err)
	}
	return &st, nil
}

// write saves the state (removes the file when no run is left).
func (st *connectState) write(path string) error {
	if len(st.Runs) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("connect state: %w", err)
		}
		return nil
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := fileio.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("connect state: %w", err)
	}
	return nil
}

func sha(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// backupFile copies path to path.toolscout-backup-TIME with path's mode
// and returns the backup's name. It never overwrites a file.
func backupFile(path string, data []byte, mode fs.FileMode, now time.Time) (string, error) {
	base := path + backupSuffix + now.UTC().Format("20060102T150405.000000000Z")
	name := base
	for i := 1; ; i++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm())
		if errors.Is(err, fs.ErrExist) && i < 100 {
			name = fmt.Sprintf("%s-%d", base, i)
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		// The umask may have narrowed the mode: the backup holds what
		// the file holds, readable by whom the file is.
		_, err = f.Write(data)
		if err == nil {
			err = f.Chmod(mode.Perm())
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		return name, nil
	}
}

// writeKeepingMode writes data to path atomically (a temporary file
// renamed over it) with path's mode, or 0600 for a new file: a config
// file may hold secrets.
func writeKeepingMode(path string, data []byte) error {
	perm := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := fileio.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
