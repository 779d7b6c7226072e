package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store/format"
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
	listedMagic = format.ListedMagic
	listedFile  = "upstreams.bin"
	listedHead  = format.ListedHead
)

// ErrListedCorrupt is wrapped by readListed's errors for a file that is
// not a whole, unchanged upstreams.bin.
var ErrListedCorrupt = format.ErrListedCorrupt

// writeListed writes servers in the upstreams.bin format.
func writeListed(w io.Writer, servers []index.ListedTools) error {
	return format.WriteListed(w, servers)
}

// readListed reads upstreams.bin (format.ReadListed).
func readListed(r io.Reader) ([]index.ListedTools, error) { return format.ReadListed(r) }

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
