package index

import "github.com/toolscout/toolscout/internal/text"

// SplitIdentifier splits a tool or parameter name into lower-case words:
// "getUserByID" gives [get user by id]. See text.SplitIdentifier.
func SplitIdentifier(s string) []string { return text.SplitIdentifier(s) }

// NameWords returns a name split into words and joined by spaces.
func NameWords(name string) string { return text.NameWords(name) }
