package upauth

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/toolscout/toolscout/internal/fileio"
)

// FileName is the credentials file's name in the data dir.
const FileName = "credentials.json"

// maxFileBytes bounds what is read of the credentials file: a few
// kilobytes an upstream, so a megabyte is thousands of them.
const maxFileBytes = 1 << 20

// Entry is what toolscout keeps of one upstream's sign-in: the client it
// registered as, where tokens come from, and the tokens. Every field but
// AccessToken, RefreshToken and ClientSecret may be shown (Status).
type Entry struct {
	// URL is the upstream's URL signed in to: a config that moves the
	// server elsewhere needs a new sign-in, the token is not sent there.
	URL          string    `json:"url"`
	Issuer       string    `json:"issuer,omitempty"`
	TokenURL     string    `json:"token_url"`
	AuthStyle    int       `json:"auth_style,omitempty"` // oauth2.AuthStyle
	ClientID     string    `json:"client_id"`
	ClientSecret string    `json:"client_secret,omitempty"`
	Resource     string    `json:"resource,omitempty"` // RFC 8707
	Scopes       []string  `json:"scopes,omitempty"`
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	SignedIn     time.Time `json:"signed_in,omitzero"`
	// Challenge is the upstream's last refusal of AccessToken, recorded
	// by the gateway for the next sign-in (nil: none).
	Challenge *Challenge `json:"challenge,omitempty"`
	// StepUp is the challenge this sign-in was made for (nil: none).
	StepUp *StepUp `json:"step_up,omitempty"`
}

// credentials is the file's format.
type credentials struct {
	Version int               `json:"version"`
	Servers map[string]*Entry `json:"servers"`
}

// Store is the credentials file. Its methods lock the file (a sibling
// .lock) for the read-modify-write, so that a login and a serve that
// refreshes do not undo each other.
type Store struct {
	path string
}

// OpenStore returns the store of the credentials file at path (which
// need not exist yet).
func OpenStore(path string) *Store { return &Store{path: path} }

// Path is the credentials file's path.
func (s *Store) Path() string { return s.path }

// ErrDamaged is matched by the error of a credentials file that cannot
// be read as one.
var ErrDamaged = errors.New("credentials file damaged")

// lockWait is how long a read or write waits for the file's lock.
const lockWait = 10 * time.Second

// ErrReadOnly is matched by the errors of a credentials file that
// cannot be written: its data dir is read-only (a replica's, a volume
// mounted read-only) or not toolscout's to write.
var ErrReadOnly = errors.New("the credentials file cannot be written")

// readOnly reports whether err says the file system refuses writes.
func readOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, os.ErrPermission)
}

func (s *Store) lock() (func(), error) { return s.lockFor(lockWait) }

// lockFor takes the file's lock. Where the data dir cannot be written
// the lock cannot be taken either: its error matches ErrReadOnly, and
// readers go on without it (the file is only ever replaced whole).
func (s *Store) lockFor(wait time.Duration) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		if readOnly(err) {
			return nil, fmt.Errorf("credentials: %w: %w", ErrReadOnly, err)
		}
		return nil, fmt.Errorf("credentials: %w", err)
	}
	unlock, err := fileio.Lock(s.path+".lock", wait)
	if err != nil {
		if readOnly(err) {
			return nil, fmt.Errorf("credentials: lock %s: %w: %w", s.path, ErrReadOnly, err)
		}
		return nil, fmt.Errorf("credentials: lock %s: %w", s.path, err)
	}
	return unlock, nil
}

// readLock is lock for a read: where the data dir is read-only, no lock
// (nothing of this process writes there).
func (s *Store) readLock() (func(), error) {
	unlock, err := s.lock()
	if errors.Is(err, ErrReadOnly) {
		return func() {}, nil
	}
	return unlock, err
}

// load reads the file (an absent one is empty).
func (s *Store) load() (*credentials, error) {
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return &credentials{Version: 1, Servers: map[string]*Entry{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	defer f.Close()
	c, err := readFrom(f)
	if err != nil {
		return nil, fmt.Errorf("credentials %s: %w: %v; remove it and sign in again with toolscout auth login", s.path, ErrDamaged, err)
	}
	return c, nil
}

// readFrom decodes the format; no value of the file is quoted in its
// errors (they are secrets).
func readFrom(r io.Reader) (*credentials, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("over %d bytes", maxFileBytes)
	}
	var c credentials
	if err := json.Unmarshal(data, &c); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("not JSON (at byte %d)", syn.Offset)
		}
		return nil, errors.New("not the credentials format")
	}
	if c.Version != 1 {
		return nil, fmt.Errorf("version %d: this toolscout reads version 1", c.Version)
	}
	if c.Servers == nil {
		c.Servers = map[string]*Entry{}
	}
	return &c, nil
}

// writeTo encodes the format.
func writeTo(w io.Writer, c *credentials) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// save writes c atomically, mode 0600.
func (s *Store) save(c *credentials) error {
	err := fileio.WriteAtomic(s.path, func(w *bufio.Writer) error { return writeTo(w, c) })
	if err != nil && readOnly(err) {
		return fmt.Errorf("credentials: write %s: %w: %w", s.path, ErrReadOnly, err)
	}
	if err != nil {
		return fmt.Errorf("credentials: write %s: %w", s.path, err)
	}
	return nil
}

// Get returns server's entry, nil when it has none.
func (s *Store) Get(server string) (*Entry, error) {
	unlock, err := s.readLock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, err := s.load()
	if err != nil {
		return nil, err
	}
	return c.Servers[server], nil
}

// All returns every entry, by server name.
func (s *Store) All() (map[string]*Entry, error) {
	unlock, err := s.readLock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, err := s.load()
	if err != nil {
		return nil, err
	}
	return c.Servers, nil
}

// Put sets server's entry.
func (s *Store) Put(server string, e *Entry) error {
	return s.update(func(c *credentials) { c.Servers[server] = e })
}

// Delete removes server's entry and reports whether it had one.
func (s *Store) Delete(server string) (bool, error) {
	had := false
	err := s.update(func(c *credentials) {
		_, had = c.Servers[server]
		delete(c.Servers, server)
	})
	return had, err
}

// modify runs f on server's entry (nil when it has none) with the file
// locked, waiting up to wait for the lock, and saves what f returns
// unless it is nil: a read, a token refresh and a write that no other
// process (a login, another serve on the data dir) comes between.
//
// Where the data dir is read-only, f runs without the lock (no process
// writes there) and the error of the save matches ErrReadOnly.
func (s *Store) modify(server string, wait time.Duration, f func(*Entry) (*Entry, error)) error {
	unlock, err := s.lockFor(wait)
	if errors.Is(err, ErrReadOnly) {
		unlock = func() {}
	} else if err != nil {
		return err
	}
	defer unlock()
	c, err := s.load()
	if err != nil {
		return err
	}
	n, err := f(c.Servers[server])
	if err != nil || n == nil {
		return err
	}
	c.Servers[server] = n
	return s.save(c)
}

func (s *Store) update(f func(*credentials)) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	c, err := s.load()
	if err != nil {
		return err
	}
	f(c)
	return s.save(c)
}

// Names returns the servers with an entry, sorted.
func Names(all map[string]*Entry) []string { return slices.Sorted(maps.Keys(all)) }
