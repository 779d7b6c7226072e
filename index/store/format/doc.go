// Package format owns the on-disk formats of the files index/store keeps
// in a config set's folder beside the indexes: upstreams.bin (the tools
// each upstream server listed last), pins.bin (the approved
// definitions), the fit files' sketch of the catalog, and feedback.log
// with the event lines read-only replicas write. Each format is a reader
// and a writer over io.Reader/io.Writer or bytes, tested and fuzzed
// without a filesystem; index/store opens, heals and locks the files.
//
// It imports index, index/pin and internal/checksum only: `make fuzz`
// builds its fuzz targets with coverage instrumentation, and
// index/store's dependencies (Bleve, bbolt, chromem-go) would have been
// instrumented with them (internal/srccheck's TestFuzzTargetsAreLight
// keeps them out).
//
//	var buf bytes.Buffer
//	err := format.WriteListed(&buf, servers)
//	servers, err = format.ReadListed(&buf) // errors wrap ErrListedCorrupt
package format
