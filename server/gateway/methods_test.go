package gateway

import (
	"go/token"
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

// TestMethodsPerType counts, for each type of the package, the methods
// declared on it in its non-test files, and, for each exported type, the
// exported methods callers can call on it (its method set, the methods
// promoted from the types it embeds included: go/types), and fails for
// one over maxMethods.
func TestMethodsPerType(t *testing.T) {
	declared := srccheck.MethodsByType(t, ".")
	for _, typ := range []string{"Gateway", "upstream"} {
		if len(declared[typ]) == 0 {
			t.Errorf("no methods found on %s: the count reads the wrong files", typ)
		}
	}
	for typ, ms := range declared {
		if len(ms) > maxMethods {
			t.Errorf("%s has %d methods, over %d: split a concern off into a type of its own (%s)", typ, len(ms), maxMethods, methodNames(ms))
		}
	}
	seen := srccheck.MethodSets(t, ".")
	if len(seen["Gateway"]) < len(declaredExported(declared["Gateway"])) {
		t.Errorf("Gateway's method set has %d methods, fewer than the %d it declares: the count reads the wrong package", len(seen["Gateway"]), len(declaredExported(declared["Gateway"])))
	}
	for typ, ms := range seen {
		if len(ms) > maxMethods {
			t.Errorf("callers of *%s see %d methods (promoted ones included), over %d: give a concern a type of its own that callers reach by an accessor, rather than embedding it (%s)", typ, len(ms), maxMethods, methodNames(ms))
		}
	}
}

// methodNames lists the names of ms, sorted.
func methodNames(ms []srccheck.Method) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// declaredExported returns the exported methods of ms.
func declaredExported(ms []srccheck.Method) []srccheck.Method {
	var out []srccheck.Method
	for _, m := range ms {
		if token.IsExported(m.Name) {
			out = append(out, m)
		}
	}
	return out
}
