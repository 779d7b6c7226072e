package index

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
)

// Tool is one tool of a catalog: the MCP Tool fields as tools/list returns
// them, plus the domain it belongs to, its optional group and tags, and the
// values toolscout derives from them.
type Tool struct {
	// Domain is the name of the upstream server or catalog domain.
	Domain string `json:"domain"`
	// Name is the tool's name inside its domain.
	Name string `json:"name"`
	// QualifiedName is unique across the catalog and valid as a tool name for
	// the strictest clients (^[a-zA-Z0-9_-]{1,64}$).
	QualifiedName string `json:"qualified_name"`
	Title         string `json:"title,omitempty"`
	Description   string `json:"description,omitempty"`
	// Summary is a one-line summary of Description, at most 80 characters.
	Summary string `json:"summary,omitempty"`
	Group   string `json:"group,omitempty"`
	// Hash is the content hash of everything that affects indexing.
	Hash string `json:"hash"`
	// Deprecated, when set, says that the tool is deprecated: why, or
	// what to use instead (DeprecatedTrue when the catalog said only
	// true). Not part of Hash either.
	Deprecated string `json:"deprecated,omitempty"`
	// The tool's tags, schemas, annotations and warnings are methods
	// (Tags, InputSchema, OutputSchema, Annotations, Warnings): a tool
	// read from a catalog file decodes them from it when asked.

	// built holds the parameters, name forms, digests, tags, output
	// schema, annotations and warnings of a tool built from a spec
	// (read-only once set: copies of the tool share it; edit makes a new
	// one). A tool read from a catalog file has psrc instead, with the
	// positions in it where its digests are (sm in the meta, ss in the
	// strings, rp in the schemas: its tags, schemas and warnings follow
	// them) and where its parameters are (pm, ps), its name forms right
	// after them: all decoded when asked, so that a server holds none of
	// them (docs/benchmarks/2026-12-06-serve-memory.md). With both, the
	// parameters are the file's and the rest built's.
	built              *toolBuilt
	psrc               *paramSource
	pm, ps, sm, ss, rp uint32
	// Disabled is set for a tool its catalog (or config) turned off
	// ("enabled": false): it stays indexed, but is not listed, found
	// (unless asked for) or run. It is not part of Hash: turning a tool
	// off or on re-indexes nothing. (Here, beside the positions, it
	// takes no word of its own.)
	Disabled bool `json:"disabled,omitempty"`
	// formsOf is the qualified name the tool's name forms (in built, or
	// in its file) are for: set when a catalog is built or read, so that
	// a build reusing the tool and the catalog cache do not split its
	// names into words again.
	formsOf string
}

// toolBuilt is what a tool built from a spec holds that a tool read from
// a catalog file decodes from it when asked.
type toolBuilt struct {
	params []Param
	forms  [3]string // nameForms, when formsOf is set
	src    string    // specDigest of what the tool was built from
	raw    string    // rawDigest of the bytes it was read from, if from a file
	extras toolExtras
}

// toolExtras are a tool's fields that a server reads of a few tools
// only (the ones it answers about): held by a tool built from a spec,
// decoded from its file for one read from a catalog file.
type toolExtras struct {
	tags, warnings             []string
	input, output, annotations json.RawMessage
}

// Tags returns the tool's tags (nil when its spec had none).
func (t *Tool) Tags() []string { return t.extras(true, false).tags }

// InputSchema returns the tool's input schema, a compact JSON object
// schema.
func (t *Tool) InputSchema() json.RawMessage { return t.extras(false, false).input }

// OutputSchema returns the tool's output schema (nil when it has none).
func (t *Tool) OutputSchema() json.RawMessage { return t.extras(false, false).output }

// Annotations returns the tool's annotations, a compact JSON object
// (nil when it has none).
func (t *Tool) Annotations() json.RawMessage { return t.extras(false, false).annotations }

// Warnings returns the tool's poisoning flags (ScanTool): text in its
// description or schema that looks like an injection. Nil when none.
func (t *Tool) Warnings() []string { return t.extras(false, true).warnings }

// extras returns t's extras: a built tool's, or those decoded from its
// file (the lists only when asked: they allocate).
func (t *Tool) extras(tags, warnings bool) toolExtras {
	if t.built != nil {
		return t.built.extras
	}
	if t.psrc == nil {
		return toolExtras{}
	}
	return t.fileExtras(tags, warnings)
}

// srcDigest is the specDigest of what the tool was built from, or "".
func (t *Tool) srcDigest() string {
	if t.built == nil && t.psrc != nil {
		src, _ := t.fileDigests()
		return src
	}
	if t.built == nil {
		return ""
	}
	return t.built.src
}

// rawDigest is the rawDigest of the bytes the tool was read from, if
// from a file, or "".
func (t *Tool) rawDigest() string {
	if t.built == nil && t.psrc != nil {
		_, raw := t.fileDigests()
		return raw
	}
	if t.built == nil {
		return ""
	}
	return t.built.raw
}

// edit gives t a built part of its own, holding what t holds now (its
// name forms and digests decoded from its file, its parameters left
// there), for the caller to change.
func (t *Tool) edit() *toolBuilt {
	b := &toolBuilt{src: t.srcDigest(), raw: t.rawDigest(), extras: t.extras(true, true)}
	switch {
	case t.built != nil:
		b.params, b.forms = t.built.params, t.built.forms
	case t.psrc != nil && t.formsOf != "":
		b.forms = t.fileForms()
	}
	t.built = b
	return b
}

// spec returns a spec that builds the tool.
func (t *Tool) spec() ToolSpec {
	x := t.extras(true, false)
	ts := ToolSpec{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: x.input,
		OutputSchema: x.output, Annotations: x.annotations, Group: t.Group, Tags: x.tags, Deprecated: Deprecation(t.Deprecated)}
	if t.Disabled {
		ts.Enabled = new(bool)
	}
	return ts
}

// Param is one top-level property of a tool's input schema.
type Param struct {
	Name        string
	Description string
	Required    bool
}

// Params returns the top-level properties of the tool's input schema, sorted
// by name. For a tool read from a catalog file they are decoded from it
// on each call (a new slice each time): callers that index every tool
// ask once per tool.
func (t *Tool) Params() []Param {
	if t.psrc == nil {
		if t.built == nil {
			return nil
		}
		return t.built.params
	}
	r := catReader{meta: t.psrc.meta, strs: t.psrc.strs, mpos: int(t.pm), spos: int(t.ps)}
	// The same bytes read whole, from the same place, when the file was
	// opened (skipParams): they cannot fail now.
	return r.params()
}

// Domain is an upstream server or a catalog domain.
type Domain struct {
	Name        string
	Description string
	// About is DomainSpec.About: ranked, never shown.
	About string
	// Groups lists the distinct groups of the domain's tools, sorted.
	Groups []string
	Tools  []*Tool

	words []string // SplitIdentifier(Name), split once
}

// Words returns the words of the domain's name ("aws-s3": aws, s3), split
// once when the catalog is built rather than on every query.
func (d *Domain) Words() []string { return d.words }

var domainRE = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// ValidDomainName reports whether name is a valid domain name
// ([a-z0-9_-]{1,32}).
func ValidDomainName(name string) bool { return domainRE.MatchString(name) }

// SanitizeDomainName turns an arbitrary server name (an mcpServers key) into a
// valid domain name: lower case, other characters replaced by '-', at most 32
// characters.
func SanitizeDomainName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		s = "server"
	}
	if len(s) > 32 {
		s = s[:32]
	}
	return s
}

const maxQualifiedName = 64

// QualifiedName derives the qualified name of tool in domain: "domain__tool",
// with characters outside [a-zA-Z0-9_-] replaced by '_' and, when the result
// would exceed 64 characters, cut and given a short hash suffix so that it
// stays unique and stable.
func QualifiedName(domain, tool string) string {
	var b strings.Builder
	b.WriteString(domain)
	b.WriteString("__")
	for _, r := range tool {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	q := b.String()
	if len(q) <= maxQualifiedName && q == domain+"__"+tool {
		return q
	}
	if len(q) <= maxQualifiedName {
		// Sanitised: add the hash anyway so that "a.b" and "a_b" stay distinct.
		if len(q)+9 <= maxQualifiedName {
			return q + "_" + shortHash(domain+"/"+tool)
		}
	}
	return q[:maxQualifiedName-9] + "_" + shortHash(domain+"/"+tool)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// computeHash returns the content hash of everything that affects how t is
// indexed. domainDesc is included because the keyword index matches it.
func (t *Tool) computeHash(domainDesc string) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode([]any{documentTextVersion, t.Domain, domainDesc, t.Name, t.QualifiedName, t.Title, t.Description, t.Group, t.Tags(), t.InputSchema()})
	return hex.EncodeToString(h.Sum(nil))[:16]
}
