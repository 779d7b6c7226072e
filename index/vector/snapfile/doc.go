// Package snapfile owns index/vector's file formats: the snapshot file
// (".snap", "TSSNAP08": float16 rows, their quantized form and each
// domain's vector sum; "TSSNAP07", "TSSNAP06" and "TSSNAP05" read), the
// store of record of a collection, and the readers of the layouts it
// replaced, kept for the migration alone (chromem-go's exports of the
// two-file format, and its file-per-document layout). Each is a decoder
// over bytes or an io.Reader, tested and fuzzed without a store
// (FuzzSnap, FuzzExport, FuzzLegacyDocument); index/vector maps, heals,
// migrates and queries the files.
//
// It imports the standard library and toolscout's internal/checksum,
// fault and fileio only, not chromem-go: `make fuzz` builds its fuzz
// targets with coverage instrumentation, and index/vector's dependencies
// (chromem-go, gonum, net/http) would have been instrumented with them
// (issue 47, item 5; internal/srccheck's TestFuzzTargetsAreLight keeps
// them out).
//
//	err := snapfile.Write(path, &snapfile.Snap{Dims: 2, IDs: ids, ...}, nil, snapfile.NewFileID(), 0)
//	s, removed, base, err := snapfile.Read(path) // checksum.ErrMismatch when damaged
package snapfile
