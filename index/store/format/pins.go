package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/toolscout/toolscout/index/pin"
)

// pins.bin, the definitions approved for each upstream tool: the layout
// is in index/store's pins.go.
const (
	// PinsMagic starts pins.bin.
	PinsMagic = "TSPINS01"
	// PinsHead is the length of pins.bin's head.
	PinsHead = len(PinsMagic) + 4 + 8
)

// ErrPinsCorrupt is wrapped by the errors for a pins.bin that is not
// whole and unchanged.
var ErrPinsCorrupt = errors.New("not a whole pins.bin")

// WritePins writes b in the pins.bin format.
func WritePins(w io.Writer, b *pin.Book) error {
	if b.Tools == nil {
		b = &pin.Book{Tools: []pin.Entry{}}
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return err
	}
	return writeSealed(w, PinsMagic, body.Bytes())
}

// ReadPins reads a pins.bin written by WritePins, checking its magic,
// length, checksum and entries. Memory stays within the body's real
// size whatever the header claims.
func ReadPins(r io.Reader) (*pin.Book, error) {
	body, err := readSealed(r, PinsMagic, ErrPinsCorrupt)
	if err != nil {
		return nil, err
	}
	var b pin.Book
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPinsCorrupt, err)
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPinsCorrupt, err)
	}
	return &b, nil
}
