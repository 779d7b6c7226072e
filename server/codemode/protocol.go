package codemode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The parent and the sandbox process talk in JSON lines over the
// child's stdin (parent to child) and stdout (child to parent). The
// first line the child reads is its program (start); then the child
// asks (request) and the parent answers (reply), one at a time, until
// the child's last line (request with op "done"). The parent treats
// every line from the child as hostile input: bounded in size, decoded
// strictly, and a line it cannot take ends the program.

// start is the program a child runs.
type start struct {
	Code   string `json:"code"`
	Limits Limits `json:"limits"`
}

// The ops a child's request carries.
const (
	opCall   = "call"
	opSearch = "search"
	opDone   = "done"
)

// request is a line from the child.
type request struct {
	Op string `json:"op"`
	// call: the domain and tool as the program wrote them (identifiers
	// or the names themselves), and the arguments.
	Domain string          `json:"domain,omitempty"`
	Tool   string          `json:"tool,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	// search
	Query string `json:"query,omitempty"`
	Limit int    `json:"limit,omitempty"`
	// done
	Result         json.RawMessage `json:"result,omitempty"`
	Console        []string        `json:"console,omitempty"`
	ConsoleDropped int             `json:"console_dropped,omitempty"`
	Error          *ProgramError   `json:"error,omitempty"`
}

// reply answers a call or a search.
type reply struct {
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value,omitempty"`
	// Error is the tool's or the search's message (ok false); Tool
	// names the tool for the Error the program sees.
	Error string `json:"error,omitempty"`
	Tool  string `json:"tool,omitempty"`
	// Limit ends the program: a limit the parent counts (tool calls,
	// result bytes) was hit.
	Limit *LimitError `json:"limit,omitempty"`
}

// errLineTooLong is a line over the reader's bound.
var errLineTooLong = errors.New("line too long")

// lineReader reads newline-ended lines of at most max bytes.
type lineReader struct {
	r   *bufio.Reader
	max int
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its newline. A line over max is
// errLineTooLong (the rest of it is not read).
func (lr *lineReader) next() ([]byte, error) {
	var line []byte
	for {
		frag, err := lr.r.ReadSlice('\n')
		if len(line)+len(frag) > lr.max+1 {
			return nil, fmt.Errorf("%w (over %d bytes)", errLineTooLong, lr.max)
		}
		line = append(line, frag...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// writeLine writes v as one JSON line, without HTML escapes: a
// program's result reaches the model as the program made it, "<" as
// one character rather than "\u003c". (Newlines in strings are still
// escaped, and so U+2028 and U+2029: a line is one message.)
func writeLine(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode ends the line
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}
