package gateway

import (
	"sort"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/internal/srccheck"
)

// maxMethods bounds the methods declared on any one type of the package
// (issue 49): Gateway routes between upstreams, an upstream owns one
// server's life, and what is separable (the upstreams by domain, what
// they serve, their prompts and resources, the calls in flight, the
// pins, the callers' own sessions) is a type of its own. A ratchet: a
// type that grows past it is a concern to split off, not a bound to
// raise.
const maxMethods = 15

// TestMethodsPerType counts the methods declared on each type of the
// package, in its non-test files, and fails for one over maxMethods.
func TestMethodsPerType(t *testing.T) {
	methods := srccheck.MethodsByType(t, ".")
	for _, typ := range []string{"Gateway", "upstream"} {
		if len(methods[typ]) == 0 {
			t.Errorf("no methods found on %s: the count reads the wrong files", typ)
		}
	}
	for typ, ms := range methods {
		if len(ms) > maxMethods {
			names := make([]string, len(ms))
			for i, m := range ms {
				names[i] = m.Name
			}
			sort.Strings(names)
			t.Errorf("%s has %d methods, over %d: split a concern off into a type of its own (%s)", typ, len(ms), maxMethods, strings.Join(names, ", "))
		}
	}
}
