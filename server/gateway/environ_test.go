package gateway

import (
	"slices"
	"testing"
)

// TestChildEnvDepth: every stdio upstream gets DepthEnv one more than
// toolscout's own, whatever its config's env says, so that a toolscout
// started through any wrapper knows a toolscout started it.
func TestChildEnvDepth(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		env     map[string]string
		want    string
	}{
		{"top level", []string{"PATH=/bin"}, nil, DepthEnv + "=1"},
		{"under toolscout", []string{"PATH=/bin", DepthEnv + "=1"}, nil, DepthEnv + "=2"},
		{"the config cannot reset it", []string{DepthEnv + "=2"}, map[string]string{DepthEnv: "0"}, DepthEnv + "=3"},
		{"not a number", []string{DepthEnv + "=many"}, nil, DepthEnv + "=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := childEnv(tc.environ, tc.env)
			n := 0
			for _, kv := range got {
				if len(kv) > len(DepthEnv) && kv[:len(DepthEnv)+1] == DepthEnv+"=" {
					n++
				}
			}
			if !slices.Contains(got, tc.want) || n != 1 || !slices.IsSorted(got) {
				t.Errorf("childEnv(%q, %v) = %q, want one %s, sorted", tc.environ, tc.env, got, tc.want)
			}
		})
	}
}
