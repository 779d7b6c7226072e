package arguments

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/condense"
)

// maxDescribedArgs is how many arguments an example's description names.
const maxDescribedArgs = 2

// maxDescribedValue bounds a value quoted in a description, in characters.
const maxDescribedValue = 32

// describeExample says in one line what calling the tool with args
// does: the tool's name in words followed by the first required
// arguments with a short value, an argument the name already says given
// by its value alone ("Pull image: nginx:1.27", "Move file: source
// /home/alice/projects/notes.md, destination ..."); without an argument
// to show, the tool's condensed summary (else its title, else its name).
// It stays short: get_tool_schema's answer already holds the whole
// description.
func describeExample(t *index.Tool, schema map[string]any, args map[string]any) string {
	toolWords := index.SplitIdentifier(t.Name)
	var parts []string
	seen := map[string]bool{}
	addArg := func(name string) {
		if len(parts) >= maxDescribedArgs || seen[name] {
			return
		}
		seen[name] = true
		if v, ok := args[name]; ok {
			if s, ok := shortValue(v); ok {
				if said(toolWords, name) {
					parts = append(parts, s)
				} else {
					parts = append(parts, index.NameWords(name)+" "+s)
				}
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
		if what := strings.TrimRight(condense.Summary(t.Description), ".…: "); what != "" {
			return what
		}
		if t.Title != "" {
			return t.Title
		}
	}
	return capitalized(strings.Join(toolWords, " ")) + ": " + strings.Join(parts, ", ")
}

// said reports whether every word of the argument's name is a word of
// the tool's name (image of pull_image).
func said(toolWords []string, name string) bool {
	words := index.SplitIdentifier(name)
	for _, w := range words {
		if !slices.Contains(toolWords, w) {
			return false
		}
	}
	return len(words) > 0
}

func capitalized(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// shortValue is a scalar, the first item of an array, or an object's
// name (else its first string) as one short line.
func shortValue(v any) (string, bool) {
	if arr, ok := v.([]any); ok {
		if len(arr) == 0 {
			return "", false
		}
		v = arr[0]
	}
	if m, ok := v.(map[string]any); ok { // an object by its name, else its first string
		v = nil
		for _, k := range append([]string{"name", "title", "id"}, sortedKeys(m)...) {
			if str, ok := m[k].(string); ok {
				v = str
				break
			}
		}
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
		s = cutAtWord(s, maxDescribedValue-1) + "…"
	}
	return s, s != ""
}

// cutAtWord returns s cut to at most n runes at the end of a word (where
// a letter or digit is not followed by another; mid-word only when the
// first word is longer), without the spaces and punctuation before the
// cut.
func cutAtWord(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := n
	for cut > 0 && isWordRune(r[cut-1]) && isWordRune(r[cut]) {
		cut--
	}
	if cut == 0 {
		cut = n
	}
	return strings.TrimRightFunc(string(r[:cut]), func(c rune) bool { return !isWordRune(c) })
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
