package format

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/toolscout/toolscout/internal/checksum"
)

// A sealed file (upstreams.bin, pins.bin) is an 8-byte magic, the
// CRC-32C of the body and its length (uint32 and uint64, little endian),
// then the body.

// sealedHead is the header's length for an 8-byte magic.
const sealedHead = 8 + 4 + 8

// writeSealed writes body under magic.
func writeSealed(w io.Writer, magic string, body []byte) error {
	var head [sealedHead]byte
	copy(head[:], magic)
	binary.LittleEndian.PutUint32(head[len(magic):], crc32.Checksum(body, checksum.Castagnoli))
	binary.LittleEndian.PutUint64(head[len(magic)+4:], uint64(len(body)))
	if _, err := w.Write(head[:]); err != nil {
		return err
	}
	_, err := w.Write(body)
	return err
}

// readSealed reads the body of a sealed file of magic, checking its
// magic, length and checksum; a failed check wraps corrupt. Memory stays
// within the body's real size whatever the header claims.
func readSealed(r io.Reader, magic string, corrupt error) ([]byte, error) {
	var head [sealedHead]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("%w: header: %v", corrupt, err)
	}
	if string(head[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: magic %q", corrupt, head[:len(magic)])
	}
	sum := binary.LittleEndian.Uint32(head[len(magic):])
	n := binary.LittleEndian.Uint64(head[len(magic)+4:])
	body, err := io.ReadAll(io.LimitReader(r, int64(min(n, 1<<62))+1))
	if err != nil {
		return nil, err
	}
	if uint64(len(body)) != n {
		return nil, fmt.Errorf("%w: body is %d bytes, the header says %d", corrupt, len(body), n)
	}
	if crc32.Checksum(body, checksum.Castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", corrupt)
	}
	return body, nil
}
