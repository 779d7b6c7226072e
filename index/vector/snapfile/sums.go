package snapfile

import "math/bits"

// A "TSSNAP08" file ends (before its checksums) with each domain's
// vector sum: per domain in the order its rows first name it (the order
// Decode's Labels list them, Domain.Names), dims float32 values, the sum
// of the float32 values of its rows' float16 vectors taken row after
// row, in float32, as index/vector's domain centroids add them up. A
// server's first query needs each domain's centroid (its sum, scaled to
// unit length): summed over every row at start that was a pass over the
// whole matrix (about 100 ms of CPU at 100k tools, each start); written
// once by the writer, a start reads them in place. The header's last
// word holds the number of domains summed.

// DomainSums returns the domain sums of the rows × dims float16 matrix
// half, whose rows' domains are domain: for each domain in the order its
// rows first name it, dims float32 values (Snap.Sums). Rows of no
// domain ("") are summed as any other.
func DomainSums(half []uint16, domain Labels, rows, dims int) []float32 {
	at, n := firstNamed(domain, rows)
	sums := make([]float32, n*dims)
	for i := 0; i < rows; i++ {
		c := sums[at[domain.Idx[i]]*dims:][:dims]
		for j, h := range half[i*dims : (i+1)*dims] {
			c[j] += halfTable[h]
		}
	}
	return sums
}

// domainSummer adds rows to their domains' sums one at a time, in row
// order (WriteRows reads its matrix a chunk at a time).
type domainSummer struct {
	at   []int
	dims int
	sums []float32
}

func newDomainSummer(domain Labels, rows, dims int) *domainSummer {
	at, n := firstNamed(domain, rows)
	return &domainSummer{at: at, dims: dims, sums: make([]float32, n*dims)}
}

// add adds row i, its float16 values v(j) for j < dims.
func (d *domainSummer) add(domain Labels, i int, v func(j int) float32) {
	c := d.sums[d.at[domain.Idx[i]]*d.dims:][:d.dims]
	for j := range c {
		c[j] += v(j)
	}
}

// firstNamed maps each index of domain.Names that rows use to its place
// in the order the rows first name it, and returns how many are used.
func firstNamed(domain Labels, rows int) (at []int, n int) {
	at = make([]int, len(domain.Names))
	for i := range at {
		at[i] = -1
	}
	for i := 0; i < rows; i++ {
		if k := domain.Idx[i]; at[k] < 0 {
			at[k] = n
			n++
		}
	}
	return at, n
}

// sumsLayout returns the bytes of n domains' sums of dims values each,
// ok false when they would not fit in an int64.
func sumsLayout(n, dims int) (total uint64, ok bool) {
	hi, lo := bits.Mul64(uint64(n), 4*uint64(dims))
	return lo, hi == 0 && lo <= 1<<62
}
