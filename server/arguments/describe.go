package arguments

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/condense"
)

// maxDescribedArgs is how many arguments an example's description names.
const maxDescribedArgs = 2

// maxDescribedValue bounds a value quoted in a description, in characters.
const maxDescribedValue = 32

// describeExample says in one line what calling the tool with args does: the
// tool's condensed summary (else its title, else its name in words)
// followed by the first required arguments with a short value, as in
// "Pull an image from a registry: image nginx:1.27".
func describeExample(t *index.Tool, schema map[string]any, args map[string]any) string {
	what := strings.TrimRight(condense.Summary(t.Description), ".…: ")
	if what == "" {
		what = t.Title
	}
	if what == "" {
		what = index.NameWords(t.Name)
		if what != "" {
			what = strings.ToUpper(what[:1]) + what[1:]
		}
	}
	var parts []string
	seen := map[string]bool{}
	addArg := func(name string) {
		if len(parts) >= maxDescribedArgs || seen[name] {
			return
		}
		seen[name] = true
		if v, ok := args[name]; ok {
			if s, ok := shortValue(v); ok {
				parts = append(parts, index.NameWords(name)+" "+s)
			}
		}
	}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				addArg(s)
			}
		}
	}
	for _, name := range sortedKeys(args) {
		addArg(name)
	}
	if len(parts) == 0 {
		return what
	}
	return what + ": " + strings.Join(parts, ", ")
}

// shortValue is a scalar (or the first scalar of an array) as one short
// line; objects are left out.
func shortValue(v any) (string, bool) {
	if arr, ok := v.([]any); ok {
		if len(arr) == 0 {
			return "", false
		}
		v = arr[0]
	}
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case float64, int, bool:
		s = fmt.Sprint(v)
	default:
		return "", false
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + "…"
	}
	if utf8.RuneCountInString(s) > maxDescribedValue {
		s = string([]rune(s)[:maxDescribedValue-1]) + "…"
	}
	return s, s != ""
}
