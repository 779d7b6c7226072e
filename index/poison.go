package index

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tool-poisoning checks: patterns of prompt injection that an upstream
// server can hide in a tool's description or schema, which the model reads
// while toolscout's one-line summaries hide them from the person browsing.
// They are security heuristics written from published tool-poisoning
// attacks (instructions to ignore instructions, hidden <IMPORTANT> blocks,
// reads of secret files, keeping things from the user, invisible text),
// not ranking rules.
//
// Each pattern has words it cannot match without (need): on ASCII text
// the regular expression only runs when one of them is there, which makes
// a clean tool cost a few substring searches instead of five backtracking
// matches (the scan was a third of loading a 10k-tool catalog).
var poisonPatterns = []struct {
	re   *regexp.Regexp
	need []string
	flag string
}{
	{regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override)\b[^.]{0,40}\b(previous|prior|above|earlier|preceding|all|other|system)\b[^.]{0,20}\b(instructions?|prompts?|rules|directions|messages?)\b`),
		[]string{"ignore", "disregard", "forget", "override"},
		"tells the model to ignore its instructions"},
	{regexp.MustCompile(`(?i)<\s*/?\s*(important|system|secret|hidden|instructions?|admin)\s*>`),
		[]string{"<"},
		"contains a hidden-instruction tag such as <IMPORTANT>"},
	{regexp.MustCompile(`(?i)(~/\.ssh|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|\.netrc\b|/etc/shadow|\.kube/config|\.docker/config\.json|\.git-credentials|\bmcp\.json\b|claude_desktop_config)`),
		[]string{"~/.ssh", "id_", ".aws/credentials", ".netrc", "/etc/shadow", ".kube/config", ".docker/config.json", ".git-credentials", "mcp.json", "claude_desktop_config"},
		"refers to a secret or configuration file"},
	{regexp.MustCompile(`(?i)\b(do not|don't|never|without)\s+(tell|telling|mention|mentioning|inform|informing|reveal|revealing|show|showing|notify|notifying)\b[^.]{0,30}\b(the )?(user|human|person)\b`),
		[]string{"user", "human", "person"},
		"asks the model to keep something from the user"},
	{regexp.MustCompile(`(?i)\b(instead of|rather than)\s+(using|calling)\s+(any|other|another|the other)\b[^.]{0,30}\btools?\b`),
		[]string{"instead of", "rather than"},
		"tries to steer the model's use of other tools"},
}

// mayMatch reports whether the pattern with these needed words can match
// text (lower-cased in lower). Non-ASCII text always may: case folding
// (?i) maps some non-ASCII letters to ASCII ones (U+017F to s).
func mayMatch(need []string, lower string, ascii bool) bool {
	if !ascii {
		return true
	}
	for _, w := range need {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// MaxDescriptionChars is the description length from which a tool is
// flagged: long descriptions are where injected text hides.
const MaxDescriptionChars = 2000

// ScanTool returns the poisoning flags of a tool's title, description and
// the text of its schemas (property descriptions included): empty for a
// clean tool.
func ScanTool(title, description string, schemas ...json.RawMessage) []string {
	decoded := make([]any, 0, len(schemas))
	for _, raw := range schemas {
		var v any
		if len(raw) > 0 && json.Unmarshal(raw, &v) == nil {
			decoded = append(decoded, v)
		}
	}
	return scanTool(title, description, decoded...)
}

// scanTool is ScanTool over schemas already decoded (a catalog decodes
// each schema once).
func scanTool(title, description string, schemas ...any) []string {
	texts := []string{title, description}
	for _, s := range schemas {
		texts = appendStrings(texts, s)
	}
	all := strings.Join(texts, "\n")
	lower, ascii := strings.ToLower(all), isASCII(all)
	var flags []string
	for _, p := range poisonPatterns {
		if mayMatch(p.need, lower, ascii) && p.re.MatchString(all) {
			flags = append(flags, p.flag)
		}
	}
	if n := invisibleRunes(all); n > 0 {
		flags = append(flags, fmt.Sprintf("contains %d invisible or direction-changing characters", n))
	}
	if n := len([]rune(description)); n > MaxDescriptionChars {
		flags = append(flags, fmt.Sprintf("description is %d characters long (flagged over %d)", n, MaxDescriptionChars))
	}
	return flags
}

// appendStrings appends every string value of a decoded JSON schema
// (descriptions, titles, enum values, defaults).
func appendStrings(out []string, v any) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = appendStrings(out, e)
		}
	case map[string]any:
		for _, e := range x {
			out = appendStrings(out, e)
		}
	}
	return out
}

// invisibleRunes counts zero-width, bidirectional-control and Unicode tag
// characters: text a person does not see but a model reads.
func invisibleRunes(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x2064,
			r >= 0x2066 && r <= 0x2069, r == 0xFEFF, r >= 0xE0000 && r <= 0xE007F:
			n++
		case unicode.Is(unicode.Cf, r) && r != 0x00AD:
			n++
		}
	}
	return n
}

// Quarantine returns specs without their flagged tools, and the domain/tool
// names it left out, for a config that asks to hide flagged tools.
func Quarantine(specs []DomainSpec) ([]DomainSpec, []string) {
	var out []DomainSpec
	var dropped []string
	for _, d := range specs {
		kept := d
		kept.Tools = nil
		for _, t := range d.Tools {
			if len(ScanTool(t.Title, t.Description, t.InputSchema, t.OutputSchema)) > 0 {
				dropped = append(dropped, d.Name+"/"+t.Name)
				continue
			}
			kept.Tools = append(kept.Tools, t)
		}
		out = append(out, kept)
	}
	return out, dropped
}
