package snapfile

// Snap is what a snapshot file holds (Write, Decode): one collection's
// rows, sorted by ID, with their L2-normalised vectors as one matrix
// (Half as a file of this format holds it, or Mat), and what a salvage
// (Salvage) marks dead.
type Snap struct {
	ID     uint64 // the file's id (Write); 0 until written or read
	Dims   int
	IDs    []string
	Hash   []string // content hash of each tool's vector
	Domain Labels
	Group  Labels
	// Mat is the matrix as float32, len(IDs) × Dims, rows L2-normalised:
	// what a writer gives Write (rounded to float16 there), and what a
	// file of an earlier format holds. Half is the matrix as float16
	// (half.go), what Decode reads from a file of this format; Write
	// writes it as it is when Mat is nil. One of the two is set.
	Mat   []float32
	Half  []uint16
	Signs *Signs // the quantized rows (quant.go); nil: computed by Write
	// Sums are the domains' vector sums (sums.go) as a file of this
	// format holds them: per domain of Domain.Names, Dims values. nil
	// when not known (a delta's file, a file of an earlier format, a
	// salvage): Write computes them, for a file that is not a delta,
	// whatever this holds.
	Sums []float32
	// Format is the magic of the earlier format the file was read from
	// (V7: without the domain sums; V6: also float32; or V5: without the
	// quantized rows, quantized as it was read);
	// "" for this format or a snapshot not read from a file.
	Format string

	Dead  []bool // nil when no row is dead
	NDead int
}

// Floats returns the matrix as float32: Mat, or Half converted (a copy).
func (s *Snap) Floats() []float32 {
	if s.Mat != nil || s.Half == nil {
		return s.Mat
	}
	return FloatRows(s.Half)
}

// Values returns the number of values of the matrix (rows × dims).
func (s *Snap) Values() int { return max(len(s.Mat), len(s.Half)) }

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

// Quantized returns the sign bits of the matrix (Quantize).
func (s *Snap) Quantized() *Signs {
	if s.Mat == nil && s.Half != nil {
		return QuantizeHalf(s.Half, len(s.IDs), s.Dims)
	}
	return Quantize(s.Mat, len(s.IDs), s.Dims)
}
