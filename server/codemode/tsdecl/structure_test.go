package tsdecl

import (
	"fmt"
	"regexp"
	"strings"
)

// The repository's npm dependencies hold no TypeScript compiler, so the
// tests check the declarations' structure instead: outside comments and
// string literals the brackets balance, every comment and string ends,
// and each top-level line is a namespace, its members functions.

// checkStructure returns what is wrong with declarations text, or nil.
func checkStructure(text string) error {
	var stack []byte
	closing := map[byte]byte{')': '(', ']': '[', '}': '{', '>': '<'}
	line := 1
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\n':
			line++
		case strings.HasPrefix(text[i:], "/*"):
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return fmt.Errorf("line %d: comment without an end", line)
			}
			line += strings.Count(text[i:i+2+end], "\n")
			i += end + 3
		case strings.HasPrefix(text[i:], "//"):
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				return nil // a last line comment
			}
			i += end - 1
		case c == '"':
			j := i + 1
			for ; j < len(text) && text[j] != '"'; j++ {
				if text[j] == '\\' {
					j++
				} else if text[j] == '\n' {
					return fmt.Errorf("line %d: string literal across lines", line)
				}
			}
			if j >= len(text) {
				return fmt.Errorf("line %d: string literal without an end", line)
			}
			i = j
		case c == '(' || c == '[' || c == '{' || c == '<':
			stack = append(stack, c)
		case closing[c] != 0:
			if len(stack) == 0 || stack[len(stack)-1] != closing[c] {
				return fmt.Errorf("line %d: %q closes nothing open (open: %q)", line, c, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("brackets left open: %q", stack)
	}
	return checkLines(text)
}

var (
	namespaceLine = regexp.MustCompile(`^declare namespace tools\.[A-Za-z_$][A-Za-z0-9_$]* \{$`)
	functionLine  = regexp.MustCompile(`^  function [A-Za-z_$][A-Za-z0-9_$]*\(args\??: `)
)

// checkLines checks what starts each line: at the top, namespaces,
// their ends, comments and blank lines; one level in, comments and
// functions.
func checkLines(text string) error {
	inComment := false
	for n, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case inComment:
			inComment = !strings.HasSuffix(t, "*/")
		case strings.HasPrefix(t, "/*"):
			inComment = !strings.HasSuffix(t, "*/")
		case l == "" || l == "}" || strings.HasPrefix(l, "//") || namespaceLine.MatchString(l) || functionLine.MatchString(l):
		case strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "  }"):
			// Inside a function's types.
		default:
			return fmt.Errorf("line %d: unexpected %q", n+1, l)
		}
	}
	return nil
}
