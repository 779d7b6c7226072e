package arguments

import (
	"encoding/json"
	"regexp"
	"strings"
)

// placeholderWords are words that stand for a value instead of being one.
// An example holding one teaches the model nothing of what to send.
var placeholderWords = map[string]bool{
	"sample": true, "foo": true, "bar": true, "baz": true, "qux": true, "string": true,
	"example": true, "test": true, "lorem": true, "ipsum": true, "placeholder": true,
	"changeme": true, "todo": true, "xxx": true, "dummy": true,
}

var letterWords = regexp.MustCompile(`[A-Za-z]+`)

// hasPlaceholder reports whether v (a value decoded from JSON, or an
// argument object) holds a placeholder word in a string or a key, or a
// "YOUR_..." stand-in.
func hasPlaceholder(v any) bool {
	data, err := json.Marshal(v)
	if err != nil {
		return false
	}
	s := string(data)
	if strings.Contains(s, "YOUR_") || strings.Contains(strings.ToLower(s), "your_") {
		return true
	}
	for _, w := range letterWords.FindAllString(s, -1) {
		if placeholderWords[strings.ToLower(w)] {
			return true
		}
	}
	return false
}
