package lint

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/tiktoken-go/tokenizer"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/arguments"
)

// Options are the budgets of Check, in o200k_base tokens (defaults
// when zero).
type Options struct {
	// MaxDescription is the most a description may cost (200).
	MaxDescription int
	// MaxSchema is the most an input schema may cost (500).
	MaxSchema int
	// Strict counts the notes as problems: parameters without a
	// description, and descriptions or schemas verbose beside the
	// catalog's median but within the budgets.
	Strict bool
}

// The default budgets: a description that costs more than a paragraph or a
// schema that costs more than a page is read by the model every time the
// tool is listed or fetched.
const (
	DefaultMaxDescription = 200
	DefaultMaxSchema      = 500
)

// Verbose is how many times the catalog's median a description or schema
// may cost before it is flagged as verbose (when it also costs more than
// VerboseFloor tokens): beside tools that say the same in a line, a long
// one costs every listing and buries what sets it apart.
const (
	Verbose      = 4
	VerboseFloor = 80
)

// MultiplexOperations is the number of values from which an enum
// parameter named like an operation (action, operation, op, method,
// command, mode) is flagged: one tool that does many things under one
// name is harder to pick and to call than one tool per operation.
const MultiplexOperations = 5

// LargeEnum is the number of values from which an enum is flagged: every
// listing pays for each value, and a model reads a long list worse than a
// short one. The better form is a core enum of the values most calls use
// beside a string for the rest (anyOf: [{"enum": [...]}, {"type":
// "string"}]), or a string whose description says the format.
const LargeEnum = 20

// NearDuplicate is the word-set similarity (Jaccard) from which two
// descriptions of one domain are flagged as near duplicates: a model
// cannot tell such tools apart from their descriptions.
const NearDuplicate = 0.9

// Tool is one tool's cost and the problems found.
type Tool struct {
	Name        string   `json:"name"`
	Tokens      int      `json:"tokens"` // name + description + input schema
	Description int      `json:"description_tokens"`
	Schema      int      `json:"schema_tokens"`
	Problems    []string `json:"problems,omitempty"`
	// Notes are what is worth a look but within the budgets: parameters
	// without a description, and a description or schema verbose beside
	// the catalog's median (problems with Strict).
	Notes []string `json:"notes,omitempty"`
}

// Report is the catalog's per-tool token cost and problems.
type Report struct {
	Encoding       string `json:"encoding"`
	MaxDescription int    `json:"max_description_tokens"`
	MaxSchema      int    `json:"max_schema_tokens"`
	Tools          []Tool `json:"tools"`
	// Flagged is the number of tools with at least one problem.
	Flagged int `json:"flagged"`
	// Counts are the problems by kind.
	Counts map[string]int `json:"counts"`
	// MedianDescription and MedianSchema are the catalog's median costs,
	// against which Verbose is measured.
	MedianDescription int `json:"median_description_tokens"`
	MedianSchema      int `json:"median_schema_tokens"`
}

// The kinds of problem, as counted in Report.Counts.
const (
	LongDescription    = "long description"
	LongSchema         = "long schema"
	NoDescription      = "no description"
	ParamNoDesc        = "parameter without description"
	Duplicate          = "duplicate description"
	VerboseDescription = "verbose description"
	SchemaBloat        = "schema bloat"
	Multiplex          = "multiplexed operations"
	LargeEnumKind      = "large enum"
)

// CheckSpecs is Check of the catalog built from specs (the tools catalog
// files or servers give now): an error of the build is returned as it is.
func CheckSpecs(specs []index.DomainSpec, o Options) (*Report, error) {
	cat, err := index.NewCatalog(specs)
	if err != nil {
		return nil, err
	}
	return Check(cat, o)
}

// Check measures each tool's token cost (name, description, input schema)
// and flags descriptions and schemas over budget, tools or parameters
// without a description, and descriptions that duplicate another's: the
// same text anywhere in the catalog, or nearly the same within a domain.
// Tools are listed costliest first.
func Check(cat *index.Catalog, o Options) (*Report, error) {
	if o.MaxDescription <= 0 {
		o.MaxDescription = DefaultMaxDescription
	}
	if o.MaxSchema <= 0 {
		o.MaxSchema = DefaultMaxSchema
	}
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, err
	}
	rep := &Report{Encoding: string(tokenizer.O200kBase), MaxDescription: o.MaxDescription, MaxSchema: o.MaxSchema, Counts: map[string]int{}}
	byName := map[string]*Tool{}
	flag := func(l *Tool, kind, msg string) {
		l.Problems = append(l.Problems, msg)
		rep.Counts[kind]++
	}
	// note records what costs more than its neighbours but within the
	// budgets: worth a look, not a failure, unless Strict.
	note := func(l *Tool, kind, msg string) {
		if o.Strict {
			flag(l, kind, msg)
			return
		}
		l.Notes = append(l.Notes, msg)
	}
	tools := cat.Tools()
	costs := make([]*Tool, len(tools))
	descs, schemas := make([]int, 0, len(tools)), make([]int, 0, len(tools))
	for i, t := range tools {
		l := &Tool{Name: t.QualifiedName}
		nameTok, err := enc.Count(t.QualifiedName)
		if err != nil {
			return nil, err
		}
		if l.Description, err = enc.Count(t.Description); err != nil {
			return nil, err
		}
		schema, err := json.Marshal(t.InputSchema())
		if err != nil {
			return nil, err
		}
		if l.Schema, err = enc.Count(string(schema)); err != nil {
			return nil, err
		}
		l.Tokens = nameTok + l.Description + l.Schema
		costs[i] = l
		descs, schemas = append(descs, l.Description), append(schemas, l.Schema)
	}
	rep.MedianDescription, rep.MedianSchema = median(descs), median(schemas)
	for i, t := range tools {
		l := costs[i]
		switch {
		case strings.TrimSpace(t.Description) == "":
			flag(l, NoDescription, "no description: the model has only the name to go by")
		case l.Description > o.MaxDescription:
			flag(l, LongDescription, fmt.Sprintf("description is %d tokens (budget %d)", l.Description, o.MaxDescription))
		case l.Description > VerboseFloor && l.Description > Verbose*rep.MedianDescription:
			note(l, VerboseDescription, fmt.Sprintf("description is %d tokens, %.0f× the catalog's median of %d: say what the tool does and what sets it apart, and move the rest into parameter descriptions", l.Description, float64(l.Description)/float64(max(rep.MedianDescription, 1)), rep.MedianDescription))
		}
		switch {
		case l.Schema > o.MaxSchema:
			flag(l, LongSchema, fmt.Sprintf("input schema is %d tokens (budget %d)", l.Schema, o.MaxSchema))
		case l.Schema > VerboseFloor && l.Schema > Verbose*rep.MedianSchema:
			note(l, SchemaBloat, fmt.Sprintf("input schema is %d tokens, %.0f× the catalog's median of %d: drop what repeats the description, rarely used options, and nested definitions a call never needs", l.Schema, float64(l.Schema)/float64(max(rep.MedianSchema, 1)), rep.MedianSchema))
		}
		var bare []string
		for _, p := range t.Params() {
			if strings.TrimSpace(p.Description) == "" {
				bare = append(bare, p.Name)
			}
		}
		for _, e := range largeEnums(arguments.Decode(t.InputSchema()), "") {
			note(l, LargeEnumKind, fmt.Sprintf("parameter %s lists %d values: keep the ones most calls use as an enum beside a plain string for the rest (anyOf), or describe the format", e.name, e.n))
		}
		for _, op := range multiplexed(t) {
			flag(l, Multiplex, fmt.Sprintf("parameter %s chooses among %d operations: one tool per operation is easier to pick and to call", op.name, op.n))
		}
		if len(bare) > 0 {
			noun := "parameters"
			if len(bare) == 1 {
				noun = "parameter"
			}
			msg := fmt.Sprintf("%d %s without a description: %s", len(bare), noun, strings.Join(bare, ", "))
			if !o.Strict {
				msg += " (fine when the name says it all)"
			}
			note(l, ParamNoDesc, msg)
		}
		byName[t.QualifiedName] = l
		rep.Tools = append(rep.Tools, *l)
	}
	dup := duplicates(cat)
	later := make([]string, 0, len(dup))
	for name := range dup {
		later = append(later, name)
	}
	sort.Strings(later)
	for _, b := range later {
		a := dup[b]
		for _, pair := range [][2]string{{a, b}, {b, a}} {
			flag(byName[pair[0]], Duplicate, fmt.Sprintf("description nearly the same as %s's: say what sets them apart", pair[1]))
		}
	}
	for i := range rep.Tools {
		rep.Tools[i] = *byName[rep.Tools[i].Name]
		if len(rep.Tools[i].Problems) > 0 {
			rep.Flagged++
		}
	}
	sort.SliceStable(rep.Tools, func(i, j int) bool { return rep.Tools[i].Tokens > rep.Tools[j].Tokens })
	return rep, nil
}

// duplicates returns pairs of tools whose descriptions are the same once
// normalised (anywhere in the catalog) or nearly the same (word sets at
// least NearDuplicate similar, within one domain, where tools compete for
// the same requests).
func duplicates(cat *index.Catalog) map[string]string {
	out := map[string]string{}
	seen := map[string]string{}
	for _, t := range cat.Tools() {
		norm := strings.Join(strings.FieldsFunc(strings.ToLower(t.Description), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		}), " ")
		if norm == "" {
			continue
		}
		if first, ok := seen[norm]; ok {
			out[t.QualifiedName] = first
			continue
		}
		seen[norm] = t.QualifiedName
	}
	for _, d := range cat.Domains() {
		sets := make([]map[string]bool, len(d.Tools))
		for i, t := range d.Tools {
			sets[i] = map[string]bool{}
			for _, w := range strings.FieldsFunc(strings.ToLower(t.Description), func(r rune) bool {
				return !unicode.IsLetter(r) && !unicode.IsDigit(r)
			}) {
				sets[i][w] = true
			}
		}
		for i := range d.Tools {
			for j := i + 1; j < len(d.Tools); j++ {
				a, b := d.Tools[i].QualifiedName, d.Tools[j].QualifiedName
				if out[b] == a || out[a] == b || len(sets[i]) < 4 || len(sets[j]) < 4 {
					continue
				}
				if jaccard(sets[i], sets[j]) >= NearDuplicate {
					out[b] = a
				}
			}
		}
	}
	return out
}

func jaccard(a, b map[string]bool) float64 {
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// median of xs (sorted in place); 0 for none.
func median(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	sort.Ints(xs)
	return xs[len(xs)/2]
}

// operationNames are parameter names that choose an operation.
var operationNames = []string{"action", "operation", "op", "method", "command", "mode"}

// operationSwitch is a parameter that chooses among n operations.
type operationSwitch struct {
	name string
	n    int
}

// multiplexed returns the tool's top-level parameters named like an
// operation whose enum has MultiplexOperations values or more.
func multiplexed(t *index.Tool) []operationSwitch {
	schema := arguments.Decode(t.InputSchema())
	props, _ := schema["properties"].(map[string]any)
	var out []operationSwitch
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p, _ := props[name].(map[string]any)
		enum, _ := p["enum"].([]any)
		if slices.Contains(operationNames, strings.ToLower(name)) && len(enum) >= MultiplexOperations {
			out = append(out, operationSwitch{name, len(enum)})
		}
	}
	return out
}

// largeEnums returns the parameters of schema, at any depth (properties,
// array items, anyOf and oneOf branches), whose enum has LargeEnum values
// or more, named by their path (entities[].kind).
func largeEnums(schema map[string]any, path string) []operationSwitch {
	var out []operationSwitch
	if enum, _ := schema["enum"].([]any); len(enum) >= LargeEnum && path != "" {
		out = append(out, operationSwitch{path, len(enum)})
	}
	props, _ := schema["properties"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if p, ok := props[name].(map[string]any); ok {
			sub := name
			if path != "" {
				sub = path + "." + name
			}
			out = append(out, largeEnums(p, sub)...)
		}
	}
	if items, ok := schema["items"].(map[string]any); ok {
		out = append(out, largeEnums(items, path+"[]")...)
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		branches, _ := schema[key].([]any)
		for _, b := range branches {
			if bm, ok := b.(map[string]any); ok {
				out = append(out, largeEnums(bm, path)...)
			}
		}
	}
	return out
}
