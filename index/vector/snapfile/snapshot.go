package snapfile

// Snap is what a snapshot file holds (Write, Decode): one collection's
// rows, sorted by ID, with their L2-normalised vectors as one matrix, and
// what a salvage (Salvage) marks dead.
type Snap struct {
	ID     uint64 // the file's id (Write); 0 until written or read
	Dims   int
	IDs    []string
	Hash   []string // content hash of each tool's vector
	Domain Labels
	Group  Labels
	Mat    []float32 // len(IDs) × Dims, rows L2-normalised
	Signs  *Signs    // the quantized rows (quant.go); nil: computed by Write
	// V5: read from a file of the earlier format "TSSNAP05", without the
	// quantized rows (quantized as it was read).
	V5 bool

	Dead  []bool // nil when no row is dead
	NDead int
}

// Labels is a column of strings that repeat from row to row (domains,
// groups): each row holds the index of its string in Names, 4 bytes where
// a string header takes 16 (at 100k tools, 2.4 MB less live heap for the
// two columns, which Go's GC doubles in a server's RSS). Read-only once
// built.
type Labels struct {
	Names []string
	Idx   []uint32
	pos   map[string]uint32
}

// Add appends a row holding name.
func (l *Labels) Add(name string) {
	i, ok := l.pos[name]
	if !ok {
		if l.pos == nil {
			l.pos = map[string]uint32{}
		}
		i = uint32(len(l.Names))
		l.Names = append(l.Names, name)
		l.pos[name] = i
	}
	l.Idx = append(l.Idx, i)
}

// At returns row i's string.
func (l *Labels) At(i int) string { return l.Names[l.Idx[i]] }

// Find returns the index rows holding name have, and whether any does.
func (l *Labels) Find(name string) (uint32, bool) {
	i, ok := l.pos[name]
	return i, ok
}
