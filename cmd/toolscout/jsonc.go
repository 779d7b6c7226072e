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
	var comments []int
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			comments = append(comments, i)
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			comments = append(comments, i)
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if out[i] != '\n' && out[i] != '\r' {
					out[i] = ' '
				}
			}
			i--
		}
	}
	// Trailing commas, now that no comment hides what follows one.
	inString = false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ',':
			j := i + 1
			for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
				j++
			}
			if j < len(out) && (out[j] == '}' || out[j] == ']') {
				out[i] = ' '
			}
		}
	}
	return jsoncText{plain: out, comments: comments}
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
