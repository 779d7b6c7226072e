package server

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolscout/toolscout/index"
)

// A toolset is dynamic mode's set of enabled domains and groups as data
// (SEP-2567's explicit state handles): enable_domain and disable_domain
// answer one and take one back, and a client of the stateless protocol may
// send one in any request's _meta (ToolsetMetaKey) to have its tools
// listed and callable by name. The handle holds the set itself, not a key
// to state kept somewhere, so any replica and any restarted process reads
// it the same: "ts1." and the base64url (unpadded) of the JSON array of
// the sorted keys ("domain" or "domain/group"). It names domains, which
// discover_tools lists to anyone: it is no secret and grants nothing
// (execute_tool runs any tool, enabled or not).

// ToolsetMetaKey is the _meta key of a request's toolset.
const ToolsetMetaKey = "io.github.toolscout/toolset"

// MaxToolsetLen bounds a toolset handle, in bytes.
const MaxToolsetLen = 8 << 10

const toolsetPrefix = "ts1."

// ErrInvalidToolset is wrapped by the errors of a handle that no
// enable_domain or disable_domain answered.
var ErrInvalidToolset = errors.New("not a toolset that enable_domain or disable_domain answered")

// encodeToolset returns the handle of the keys.
func encodeToolset(keys map[string]bool) string {
	js, _ := json.Marshal(slices.Sorted(maps.Keys(keys)))
	return toolsetPrefix + base64.RawURLEncoding.EncodeToString(js)
}

// decodeToolset returns the keys a handle names.
func decodeToolset(h string) (map[string]bool, error) {
	if len(h) > MaxToolsetLen {
		return nil, fmt.Errorf("%w: %d bytes, over the %d a toolset may have", ErrInvalidToolset, len(h), MaxToolsetLen)
	}
	rest, ok := strings.CutPrefix(h, toolsetPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: it does not start with %q", ErrInvalidToolset, toolsetPrefix)
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	var list []string
	if err == nil {
		err = json.Unmarshal(raw, &list)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToolset, err)
	}
	keys := make(map[string]bool, len(list))
	for _, k := range list {
		if d, _, _ := strings.Cut(k, "/"); d == "" {
			return nil, fmt.Errorf("%w: it names %.100q, which is no domain", ErrInvalidToolset, k)
		}
		keys[k] = true
	}
	return keys, nil
}

// toolsetError is the message for a handle that decodeToolset refused.
func toolsetError(h string, err error) error {
	return fmt.Errorf("toolset %.100q: %w; pass the toolset an earlier enable_domain or disable_domain answered, or none to start a new set", h, err)
}

// knownKeys returns the keys whose domain (and group) the catalog has or
// whose server is configured but unavailable (down) now, and the others
// sorted: a toolset made before the catalog changed, or on a replica with
// another catalog.
func knownKeys(cat *index.Catalog, unavailable map[string]string, keys map[string]bool) (map[string]bool, []string) {
	known := make(map[string]bool, len(keys))
	var dropped []string
	for k := range keys {
		domain, group, _ := strings.Cut(k, "/")
		d := cat.Domain(domain)
		_, down := unavailable[domain]
		if down || d != nil && (group == "" || slices.Contains(d.Groups, group)) {
			known[k] = true
		} else {
			dropped = append(dropped, k)
		}
	}
	slices.Sort(dropped)
	return known, dropped
}
