package format

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/toolscout/toolscout/index"
)

// upstreams.bin, the tools each upstream MCP server listed last: the
// layout is in index/store's listed.go.

const (
	// ListedMagic starts upstreams.bin.
	ListedMagic = "TSUPSV01"
	// ListedHead is the length of upstreams.bin's head.
	ListedHead = len(ListedMagic) + 4 + 8
)

// ErrListedCorrupt is wrapped by ReadListed's errors for a file that is
// not a whole, unchanged upstreams.bin.
var ErrListedCorrupt = errors.New("not a whole upstreams.bin")

// WriteListed writes servers in the upstreams.bin format.
func WriteListed(w io.Writer, servers []index.ListedTools) error {
	if servers == nil {
		servers = []index.ListedTools{}
	}
	body, err := json.Marshal(servers)
	if err != nil {
		return err
	}
	return writeSealed(w, ListedMagic, body)
}

// ReadListed reads an upstreams.bin written by WriteListed, checking its
// magic, length and checksum, and that each server has a valid domain
// name, once. Memory stays within the body's real size whatever the
// header claims.
func ReadListed(r io.Reader) ([]index.ListedTools, error) {
	body, err := readSealed(r, ListedMagic, ErrListedCorrupt)
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
