package arguments

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolscout/toolscout/index"
)

// formatted are values of the string formats tools use. Addresses are of
// the ranges reserved for documentation (RFC 5737, RFC 3849).
var formatted = map[string]string{
	"email":         "alice@acme.io",
	"idn-email":     "alice@acme.io",
	"uri":           "https://acme.io/docs/start",
	"url":           "https://acme.io/docs/start",
	"iri":           "https://acme.io/docs/start",
	"uri-reference": "/docs/start",
	"hostname":      "api.acme.io",
	"idn-hostname":  "api.acme.io",
	"ipv4":          "192.0.2.10",
	"ipv6":          "2001:db8::10",
	"date-time":     "2026-03-14T09:30:00Z",
	"date":          "2026-03-14",
	"time":          "09:30:00",
	"duration":      "PT30M",
	"uuid":          "3f2c8a9e-5b1d-4c7e-9a60-2d4f8b1e7c35",
	"regex":         "^v[0-9]+",
	"json-pointer":  "/items/0",
}

// dateTimeHint finds a description that asks for a timestamp in words
// ("RFC3339 timestamp", "ISO 8601 date-time") when the schema gives no
// format.
var dateTimeHint = regexp.MustCompile(`(?i)rfc\s?3339|iso[\s-]?8601|date-?time`)

// valueRule gives a string property a value of its kind when its name
// (or, failing that, its description) holds one of the phrases. A weak
// rule's words say little alone ("source", "value"): the description
// is read first.
type valueRule struct {
	phrases []string // words as SplitIdentifier gives them, space-separated
	value   string
	weak    bool
}

// valueRules, in order of precedence: a name's words are read from the
// end (the last word says its kind: "message_id" is an ID, "file_path" a
// path), and at each word the first rule with a phrase ending there wins,
// so that phrases ("issue key") come before their last word ("key").
var valueRules = []valueRule{
	{phrases: []string{"api key", "access key", "secret key", "private key", "token", "secret", "apikey", "credential", "credentials", "bearer"}, value: "tok_9f8e7d6c5b4a"},
	{phrases: []string{"password", "passphrase"}, value: "correct-horse-battery"},
	{phrases: []string{"issue key", "issue id or key", "inward issue", "outward issue", "ticket", "issue", "issues"}, value: "PROJ-123"},
	{phrases: []string{"time spent"}, value: "1h 30m"},
	{phrases: []string{"time max", "end time"}, value: "2026-03-14T17:00:00Z"},
	{phrases: []string{"time min", "start time", "datetime"}, value: "2026-03-14T09:30:00Z"},
	{phrases: []string{"entity type"}, value: "person"},
	{phrases: []string{"relation type"}, value: "works_at"},
	{phrases: []string{"link type"}, value: "Blocks"},
	{phrases: []string{"entity name", "entity"}, value: "Alice Martin"},
	{phrases: []string{"first name", "given name", "firstname"}, value: "Alice"},
	{phrases: []string{"last name", "family name", "surname", "lastname"}, value: "Martin"},
	{phrases: []string{"full name", "display name", "person", "contact"}, value: "Alice Martin"},
	{phrases: []string{"label selector", "field selector"}, value: "app=web"},
	{phrases: []string{"selector", "css", "xpath", "element"}, value: "#submit-button"},
	{phrases: []string{"payment intent"}, value: "pi_3MtwBwLkdIwHu7ix"},
	{phrases: []string{"customer"}, value: "cus_NffrFeUfNV2Hib"},
	{phrases: []string{"price"}, value: "price_1MoBy5LkdIwHu7ix"},
	{phrases: []string{"email", "mail", "to", "cc", "bcc", "recipient", "recipients", "attendee", "attendees", "sender"}, value: "alice@acme.io"},
	{phrases: []string{"url", "uri", "link", "href", "endpoint", "website", "webhook"}, value: "https://acme.io/docs/start"},
	{phrases: []string{"repo", "repository"}, value: "octocat/hello-world"},
	{phrases: []string{"owner", "org", "organization", "user", "username", "login", "author", "assignee", "reviewer", "member"}, value: "octocat"},
	{phrases: []string{"head", "source branch", "feature branch"}, value: "fix/login-timeout"},
	{phrases: []string{"branch", "ref", "base"}, value: "main"},
	{phrases: []string{"image"}, value: "nginx:1.27"},
	{phrases: []string{"container"}, value: "web-1"},
	{phrases: []string{"pod"}, value: "web-0"},
	{phrases: []string{"namespace"}, value: "default"},
	{phrases: []string{"manifest", "yaml"}, value: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  LOG_LEVEL: info\n"},
	{phrases: []string{"resource"}, value: "pod/web-0"},
	{phrases: []string{"object key", "key prefix", "prefix", "key"}, value: "reports/2026-03/summary.csv"},
	{phrases: []string{"dir", "directory", "folder", "root", "cwd"}, value: "/home/alice/projects"},
	{phrases: []string{"path", "paths", "file", "filename", "filepath", "files"}, value: "/home/alice/projects/notes.md"},
	{phrases: []string{"host", "hostname", "domain", "server"}, value: "api.acme.io"},
	{phrases: []string{"ip"}, value: "192.0.2.10"},
	{phrases: []string{"timezone", "tz", "zone"}, value: "Europe/Paris"},
	{phrases: []string{"date", "day", "since", "until", "due", "deadline", "birthday"}, value: "2026-03-14"},
	{phrases: []string{"time", "start", "end"}, value: "09:30:00"},
	{phrases: []string{"duration", "interval", "period"}, value: "30m"},
	{phrases: []string{"us state", "state code", "region code"}, value: "CA"},
	{phrases: []string{"address", "street"}, value: "10 Downing Street, London"},
	{phrases: []string{"city", "location", "place", "locations", "region"}, value: "Paris"},
	{phrases: []string{"origin", "origins"}, value: "Paris", weak: true},
	{phrases: []string{"destination", "destinations"}, value: "Lyon", weak: true},
	{phrases: []string{"country"}, value: "FR"},
	{phrases: []string{"lang", "language", "locale"}, value: "en"},
	{phrases: []string{"currency"}, value: "EUR"},
	{phrases: []string{"symbol", "ticker"}, value: "AAPL"},
	{phrases: []string{"phone", "mobile"}, value: "+33 1 23 45 67 89"},
	{phrases: []string{"channel"}, value: "#general"},
	{phrases: []string{"calendar", "calendars"}, value: "primary"},
	{phrases: []string{"tag", "label", "category", "labels", "tags"}, value: "bug"},
	{phrases: []string{"color", "colour"}, value: "blue"},
	{phrases: []string{"version", "release"}, value: "1.4.2"},
	{phrases: []string{"command", "cmd", "shell"}, value: "ls -la"},
	{phrases: []string{"sql", "statement"}, value: "SELECT id, title FROM issues LIMIT 10"},
	{phrases: []string{"code", "script", "snippet", "expression"}, value: "print('hello')"},
	{phrases: []string{"regex", "pattern", "glob"}, value: "*.md"},
	{phrases: []string{"query", "q", "search", "keyword", "keywords", "term", "terms"}, value: "quarterly sales report"},
	{phrases: []string{"title", "subject", "heading", "topic", "summary"}, value: "Fix login timeout on mobile"},
	{phrases: []string{"observation", "observations", "fact"}, value: "Prefers morning meetings"},
	{phrases: []string{"message", "body", "text", "content", "comment", "description", "note", "prompt", "reason", "contents"}, value: "Deploy finished; all checks passed."},
	{phrases: []string{"transition", "stage", "dealstage"}, value: "In Progress"},
	{phrases: []string{"status", "state"}, value: "open", weak: true},
	{phrases: []string{"range", "cells", "cell"}, value: "Sheet1!A1:C10"},
	{phrases: []string{"sheet", "tab"}, value: "Sheet1"},
	{phrases: []string{"table"}, value: "orders"},
	{phrases: []string{"schema"}, value: "public"},
	{phrases: []string{"database", "db"}, value: "analytics"},
	{phrases: []string{"company", "account"}, value: "Acme Corp"},
	{phrases: []string{"slug", "project"}, value: "web-app"},
	{phrases: []string{"id", "ids", "uid", "iid", "sha", "hash"}, value: "a1b2c3d4"},
	{phrases: []string{"timestamp", "ts"}, value: "1773480600.000100"},
	{phrases: []string{"emoji", "reaction"}, value: "thumbsup"},
	{phrases: []string{"bucket"}, value: "acme-reports"},
	{phrases: []string{"name", "dealname", "names"}, value: "weekly-report"},
	{phrases: []string{"role", "permission"}, value: "reader"},
	{phrases: []string{"format", "type", "kind", "mode"}, value: "json"},
	{phrases: []string{"source", "target", "input", "output", "from"}, value: "/home/alice/projects/notes.md", weak: true},
	{phrases: []string{"value", "values", "item", "items", "data", "arg", "args", "argument", "option"}, value: "blue", weak: true},
}

// fallbackString is the value of a string property that neither its name
// nor its description says anything of: a plausible name, no placeholder.
const fallbackString = "Acme Corp"

// ruleAt returns the first rule with a phrase that ends at words[i].
func ruleAt(words []string, i int) (valueRule, bool) {
	if r, ok := ruleIndexAt(words, i, nil); ok {
		return valueRules[r], true
	}
	return valueRule{}, false
}

// ruleIndexAt is ruleAt's index in valueRules, skipping the phrases
// that are one word of skip.
func ruleIndexAt(words []string, i int, skip map[string]bool) (int, bool) {
	for r, rule := range valueRules {
		for _, p := range rule.phrases {
			pw := strings.Fields(p)
			if len(pw) == 1 && skip[pw[0]] {
				continue
			}
			if start := i - len(pw) + 1; start >= 0 && equalWords(words[start:i+1], pw) {
				return r, true
			}
		}
	}
	return 0, false
}

// nameOnly are words that name a kind of value in a property's name but
// are common words of a description ("Path to the file").
var nameOnly = map[string]bool{
	"to": true, "cc": true, "from": true, "q": true, "ts": true, "tz": true, "ip": true, "head": true,
	"base": true, "start": true, "end": true, "time": true, "day": true, "ref": true, "tab": true,
	"root": true, "db": true, "id": true, "ids": true, "key": true, "name": true, "names": true,
	"type": true, "kind": true, "mode": true, "format": true, "state": true, "status": true,
	"data": true, "text": true, "content": true, "contents": true, "item": true, "items": true,
	"value": true, "values": true, "period": true, "code": true, "range": true, "schema": true,
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// maxDescriptionWords is how far into a description its words are read
// for a value's kind: the first words say what the property is.
const maxDescriptionWords = 12

// namedString is a value of the kind the property's name says, else of
// the kind its description says, else (for a name of weak words) of the
// kind the tool's name says ("destination" of move_file is a path), else
// fallbackString; then fitted to the tool (inContext).
func namedString(toolWords []string, name, description string) string {
	return inContext(toolWords, name, kindOf(toolWords, name, description))
}

func kindOf(toolWords []string, name, description string) string {
	var weak *valueRule
	words := index.SplitIdentifier(name)
	for i := len(words) - 1; i >= 0; i-- {
		if r, ok := ruleAt(words, i); ok {
			if !r.weak {
				return r.value
			}
			if weak == nil {
				weak = &r
			}
		}
	}
	// In a description, the rule of highest precedence among its first
	// words, short words that are names only in a name left out.
	best := len(valueRules)
	dw := descriptionWords.FindAllString(strings.ToLower(description), maxDescriptionWords)
	for i := range dw {
		if r, ok := ruleIndexAt(dw, i, nameOnly); ok && r < best && !valueRules[r].weak {
			best = r
		}
	}
	if best < len(valueRules) {
		return valueRules[best].value
	}
	if weak != nil {
		for i := range toolWords {
			if r, ok := ruleIndexAt(toolWords, i, nameOnly); ok && r < best && !valueRules[r].weak {
				best = r
			}
		}
		if best < len(valueRules) {
			return valueRules[best].value
		}
		return weak.value
	}
	return fallbackString
}

// filePath is the value valueRules give a file's path.
const filePath = "/home/alice/projects/notes.md"

// contextRules fit a file's path to the tool and the property: a
// directory for a tool of directories (create_directory, directory_tree),
// another path for the destination of a move or a copy.
var contextRules = []struct {
	toolWords, nameWords []string
	value                string
}{
	{nameWords: []string{"destination", "dest", "target", "new"}, value: "/home/alice/archive/notes.md"},
	{toolWords: []string{"directory", "directories", "dir", "folder", "tree"}, value: "/home/alice/projects"},
}

func inContext(toolWords []string, name, value string) string {
	if value != filePath {
		return value
	}
	nameWords := index.SplitIdentifier(name)
	for _, r := range contextRules {
		for _, w := range r.nameWords {
			if slices.Contains(nameWords, w) {
				return r.value
			}
		}
		for _, w := range r.toolWords {
			if slices.Contains(toolWords, w) {
				return r.value
			}
		}
	}
	return value
}

var descriptionWords = regexp.MustCompile(`[a-z0-9]+`)

// stringValue is a string for a property called name of a tool whose
// name's words are toolWords: by its format, a timestamp its description
// asks for, its name and description (namedString), then
// shaped by its pattern (when the value does not match it) and its
// length bounds.
func stringValue(toolWords []string, name string, schema map[string]any) string {
	desc, _ := schema["description"].(string)
	s, ok := formatted[fmt.Sprint(schema["format"])]
	if !ok && dateTimeHint.MatchString(desc) {
		s, ok = formatted["date-time"], true
	}
	if !ok {
		s = namedString(toolWords, name, desc)
	}
	if p, ok := schema["pattern"].(string); ok {
		if re, err := regexp.Compile(p); err == nil && !re.MatchString(s) {
			if m, ok := matchingString(p); ok && re.MatchString(m) {
				s = m
			}
		}
	}
	if m, ok := schema["minLength"].(float64); ok {
		for utf8.RuneCountInString(s) < int(m) {
			s += "x"
		}
	}
	if m, ok := schema["maxLength"].(float64); ok && utf8.RuneCountInString(s) > int(m) {
		s = string([]rune(s)[:int(m)])
	}
	return s
}
