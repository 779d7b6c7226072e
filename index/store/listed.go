package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/fileio"
	"io"
	"os"
	"path/filepath"
)

// The tools each upstream MCP server listed last, kept in a config set's
// folder so that a start serves them (discovery, schemas, eager lists)
// before the servers answer, and re-indexes only what changed once they
// do. Nothing depends on the file being there: without it a start waits
// for the servers, as a first start does.
//
// Layout of upstreams.bin:
//
//	"TSUPSV01"   magic
//	uint32       CRC-32C of the body (little endian)
//	uint64       length of the body (little endian)
//	body         JSON: [{"domain", "title", "instructions", "tools": [ToolSpec...]}...]
//
// The file is written to a temporary name and renamed (fileio.WriteAtomic);
// one that fails its magic, length, checksum or JSON is removed and said
// in Store.Healed.
const (
	listedMagic = "TSUPSV01"
	listedFile  = "upstreams.bin"
	listedHead  = len(listedMagic) + 4 + 8
)

// ErrListedCorrupt is wrapped by readListed's errors for a file that is
// not a whole, unchanged upstreams.bin.
var ErrListedCorrupt = errors.New("not a whole upstreams.bin")

// writeListed writes servers in the upstreams.bin format.
func writeListed(w io.Writer, servers []index.ListedTools) error {
	if servers == nil {
		servers = []index.ListedTools{}
	}
	body, err := json.Marshal(servers)
	if err != nil {
		return err
	}
	return writeSealed(w, listedMagic, body)
}

// readListed reads an upstreams.bin written by writeListed, checking its
// magic, length and checksum, and that each server has a valid domain
// name, once. Memory stays within the body's real size whatever the
// header claims.
func readListed(r io.Reader) ([]index.ListedTools, error) {
	body, err := readSealed(r, listedMagic, ErrListedCorrupt)
	if err != nil {
		return nil, err
	}
	var servers []index.ListedTools
	if err := json.Unmarshal(body, &servers); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrListedCorrupt, err)
	}
	seen := map[string]bool{}
	for i, s := range servers {
		if !index.ValidDomainName(s.Domain) || seen[s.Domain] {
			return nil, fmt.Errorf("%w: server %d: domain %q is invalid or repeated", ErrListedCorrupt, i, s.Domain)
		}
		seen[s.Domain] = true
	}
	return servers, nil
}

// ListedTools returns the tools each upstream server listed last
// (SaveListedTools), or nil when there are none. A file that cannot be
// read is removed, and said in Healed: the servers list their tools
// again.
func (s *Store) ListedTools() []index.ListedTools {
	if s.dir == "" {
		return nil
	}
	path := filepath.Join(s.dir, listedFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var servers []index.ListedTools
	if err == nil {
		servers, err = readListed(bytes.NewReader(data))
	}
	if err != nil {
		os.Remove(path)
		s.healed = append(s.healed, fmt.Sprintf("upstream tools %s could not be read (%v); removed, the servers list their tools again", path, err))
		return nil
	}
	return servers
}

// SaveListedTools keeps servers (each upstream's last tools) in the data
// dir, replacing what was kept (written whole or not at all). In memory
// it does nothing.
func (s *Store) SaveListedTools(servers []index.ListedTools) error {
	if s.dir == "" {
		return nil
	}
	return fileio.WriteAtomic(filepath.Join(s.dir, listedFile), func(w *bufio.Writer) error { return writeListed(w, servers) })
}
