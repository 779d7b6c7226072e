package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// JSON with comments (JSONC), as VS Code writes its mcp.json: // and /*
// */ comments and trailing commas. connect reads every client's file
// through blankJSONC, so that a comment a user added to any of them is
// no error.

// jsoncText is a client's file read as JSON: plain is the file with
// every comment and trailing comma blanked out (spaces, newlines kept),
// so that an offset into plain is the same offset into the file; comments
// holds the start offsets of the comments.
type jsoncText struct {
	plain    []byte
	comments []int
}

// blankJSONC returns data as plain JSON of the same length: comments and
// trailing commas become spaces; newlines inside block comments stay, so
// that line numbers stay too.
func blankJSONC(data []byte) jsoncText {
	out := bytes.Clone(data)
	comments := blankComments(out)
	// Trailing commas, now that no comment hides what follows one.
	blankTrailingCommas(out)
	return jsoncText{plain: out, comments: comments}
}

// inStringAt steps over out[i], a byte inside a JSON string: it returns
// the index of the last byte consumed (an escape takes the next byte too)
// and whether the string goes on after it.
func inStringAt(out []byte, i int) (int, bool) {
	switch out[i] {
	case '\\':
		return i + 1, true
	case '"':
		return i, false
	}
	return i, true
}

// blankComments turns out's // and /* */ comments into spaces in place
// (keeping a block comment's newlines) and returns where each started.
func blankComments(out []byte) []int {
	var comments []int
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			i, inString = inStringAt(out, i)
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			comments = append(comments, i)
			i = blankLineComment(out, i)
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			comments = append(comments, i)
			i = blankBlockComment(out, i) - 1
		}
	}
	return comments
}

// blankLineComment blanks the // comment at out[i:] up to its newline
// and returns the newline's index (len(out) at the end of the file).
func blankLineComment(out []byte, i int) int {
	for ; i < len(out) && out[i] != '\n'; i++ {
		out[i] = ' '
	}
	return i
}

// blankBlockComment blanks the /* */ comment at out[i:] (to the end of the
// file when it is not closed), keeping its line breaks, and returns the
// index just past it.
func blankBlockComment(out []byte, i int) int {
	stop := len(out)
	if end := bytes.Index(out[i+2:], []byte("*/")); end >= 0 {
		stop = i + 2 + end + 2
	}
	for ; i < stop; i++ {
		if out[i] != '\n' && out[i] != '\r' {
			out[i] = ' '
		}
	}
	return stop
}

// blankTrailingCommas turns every comma that only white space separates
// from a closing } or ] into a space, in place.
func blankTrailingCommas(out []byte) {
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			i, inString = inStringAt(out, i)
		case c == '"':
			inString = true
		case c == ',' && closesAfter(out, i+1):
			out[i] = ' '
		}
	}
}

// closesAfter reports whether the first byte from out[j] on that is not
// JSON white space is a } or a ].
func closesAfter(out []byte, j int) bool {
	for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
		j++
	}
	return j < len(out) && (out[j] == '}' || out[j] == ']')
}

// readJSONC checks that data (file's bytes) is a JSON object once its
// comments and trailing commas are blanked, and returns it blanked. A
// file that is not says the line.
func readJSONC(file string, data []byte) (jsoncText, error) {
	t := blankJSONC(data)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(t.plain, &top); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			line := bytes.Count(data[:min(int(syn.Offset), len(data))], []byte("\n")) + 1
			return t, &ConfigError{File: file, Reason: fmt.Sprintf("not JSON: line %d: %v", line, err)}
		}
		return t, &ConfigError{File: file, Reason: "not a JSON object: " + err.Error()}
	}
	if top == nil {
		return t, &ConfigError{File: file, Reason: "not a JSON object (null)"}
	}
	return t, nil
}

// commentsIn counts the comments that start in [start, end).
func (t jsoncText) commentsIn(start, end int) int {
	n := 0
	for _, c := range t.comments {
		if c >= start && c < end {
			n++
		}
	}
	return n
}
