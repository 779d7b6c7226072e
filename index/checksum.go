package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// Every file toolscout writes in the data dir carries CRC-32Cs of its
// bytes, checked before any of them is used: the catalog cache in its
// header (catcache.go), vector snapshots and fit files in a footer
// (writeChecked), chromem-go exports in a last, empty export
// (writeExport). A byte changed on the disk then makes the file
// unreadable, never a silently different ranking. A start reads about
// 210 MB of snapshots at 100k tools, where CRC-32C runs at 5.6 GB/s on
// one core here (SSE 4.2) and 11.5 GB/s on two, the speed of reading
// the memory at all: so writeChecks keeps one CRC per MiB, and
// checkedBody checks them on every core.

// errChecksum means a file's bytes do not match the checksum written
// with them.
var errChecksum = errors.New("checksum mismatch: the file was changed or damaged since it was written")

// crcWriter passes writes to w and keeps the CRC-32C of what it passed.
type crcWriter struct {
	w   io.Writer
	crc uint32
}

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	return n, err
}

// crcReader reads from r and keeps the CRC-32C of what it returned. It is
// an io.ByteReader, so a gob decoder reads through it exactly what it
// decodes, no further.
type crcReader struct {
	r   *bufio.Reader
	crc uint32
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	return n, err
}

func (c *crcReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.crc = crc32.Update(c.crc, castagnoli, []byte{b})
	}
	return b, err
}

// checkChunk is the number of bytes each CRC of writeChecked's footer
// covers.
const checkChunk = 1 << 20

// chunkWriter passes writes to w and keeps the CRC-32C of each
// checkChunk bytes that passed.
type chunkWriter struct {
	w    io.Writer
	n    int // bytes in the current chunk
	crcs []uint32
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	for rest := p[:n]; len(rest) > 0; {
		if c.n == 0 {
			c.crcs = append(c.crcs, 0)
		}
		k := min(len(rest), checkChunk-c.n)
		c.crcs[len(c.crcs)-1] = crc32.Update(c.crcs[len(c.crcs)-1], castagnoli, rest[:k])
		c.n = (c.n + k) % checkChunk
		rest = rest[k:]
	}
	return n, err
}

// minFooter is the size of the shortest footer of checksums: that of an
// empty body.
const minFooter = 8

// writeChecked writes path through write, atomically (WriteFileAtomic),
// followed by its footer of checksums (writeChecks).
func writeChecked(path string, write func(w *bufio.Writer) error) error {
	return WriteFileAtomic(path, func(out *bufio.Writer) error { return writeChecks(out, write) })
}

// writeChecks writes to out through write, then a footer of checksums
// (little endian): the CRC-32C of each checkChunk bytes of what write
// wrote (the last chunk may be shorter), their number (uint32), then the
// CRC-32C of the footer before it. checkedBody checks them and takes
// them off again.
func writeChecks(out io.Writer, write func(w *bufio.Writer) error) error {
	cw := &chunkWriter{w: out}
	w := bufio.NewWriterSize(cw, 1<<16)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := out.Write(footerOf(cw.crcs))
	return err
}

// appendChecks returns body followed by its footer of checksums, as
// writeChecks writes it: for a value kept in memory or in a database.
func appendChecks(body []byte) []byte {
	cw := &chunkWriter{w: io.Discard}
	cw.Write(body)
	return append(body, footerOf(cw.crcs)...)
}

func footerOf(crcs []uint32) []byte {
	footer := make([]byte, 0, 4*len(crcs)+minFooter)
	for _, c := range crcs {
		footer = binary.LittleEndian.AppendUint32(footer, c)
	}
	footer = binary.LittleEndian.AppendUint32(footer, uint32(len(crcs)))
	return binary.LittleEndian.AppendUint32(footer, crc32.Checksum(footer, castagnoli))
}

// checkedBody returns data without the footer writeChecks appended, or
// errChecksum when they do not match. The chunks are checked on every
// core.
func checkedBody(data []byte) ([]byte, error) {
	if len(data) < minFooter {
		return nil, errChecksum
	}
	n := int64(binary.LittleEndian.Uint32(data[len(data)-8:]))
	size := 4*n + minFooter
	if size > int64(len(data)) || crc32.Checksum(data[int64(len(data))-size:len(data)-4], castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, errChecksum
	}
	body, crcs := data[:int64(len(data))-size], data[int64(len(data))-size:len(data)-minFooter]
	if int64((len(body)+checkChunk-1)/checkChunk) != n {
		return nil, errChecksum
	}
	workers := min(runtime.GOMAXPROCS(0), int(n))
	var bad atomic.Bool
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < int(n) && !bad.Load(); i += workers {
				chunk := body[i*checkChunk : min((i+1)*checkChunk, len(body))]
				if crc32.Checksum(chunk, castagnoli) != binary.LittleEndian.Uint32(crcs[4*i:]) {
					bad.Store(true)
				}
			}
		})
	}
	wg.Wait()
	if bad.Load() {
		return nil, errChecksum
	}
	return body, nil
}
