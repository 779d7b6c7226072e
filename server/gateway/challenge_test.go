package gateway

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolscout/toolscout/internal/redact"
)

func TestParseChallenges(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []challenge
	}{
		{"bearer with params", `Bearer realm="up", error="invalid_token", error_description="bad token"`,
			[]challenge{{"Bearer", map[string]string{"realm": "up", "error": "invalid_token", "error_description": "bad token"}}}},
		{"scheme alone", `Bearer`, []challenge{{"Bearer", map[string]string{}}}},
		{"token values, spaces around =", `Bearer realm = up ,error=invalid_token`,
			[]challenge{{"Bearer", map[string]string{"realm": "up", "error": "invalid_token"}}}},
		{"escapes and commas in quotes", `Bearer realm="a \"b\", c", scope="x y"`,
			[]challenge{{"Bearer", map[string]string{"realm": `a "b", c`, "scope": "x y"}}}},
		{"two challenges", `Basic realm="b", Bearer realm="r", error="e"`,
			[]challenge{{"Basic", map[string]string{"realm": "b"}}, {"Bearer", map[string]string{"realm": "r", "error": "e"}}}},
		{"token68 dropped", `Negotiate YII/+abc==, Bearer realm="r"`,
			[]challenge{{"Negotiate", map[string]string{}}, {"Bearer", map[string]string{"realm": "r"}}}},
		{"token68 with padding", `Basic abc=, Bearer`,
			[]challenge{{"Basic", map[string]string{}}, {"Bearer", map[string]string{}}}},
		{"names fold case, first wins", `Bearer REALM="a", realm="b"`,
			[]challenge{{"Bearer", map[string]string{"realm": "a"}}}},
		{"empty list elements", `, ,Bearer realm="r",, error="e"`,
			[]challenge{{"Bearer", map[string]string{"realm": "r", "error": "e"}}}},
		{"unterminated quote stops", `Bearer realm="r", error="e`,
			[]challenge{{"Bearer", map[string]string{"realm": "r"}}}},
		{"missing comma stops", `Bearer realm="r" error="e", Basic`,
			[]challenge{{"Bearer", map[string]string{"realm": "r"}}}},
		{"not a challenge", `="x"`, nil},
		{"empty", ``, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseChallenges(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseChallenges(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// TestKeptChallenges: of a WWW-Authenticate, only the scheme, realm,
// error code and resource_metadata are quoted, and none of them when it
// holds what toolscout sent.
func TestKeptChallenges(t *testing.T) {
	const sent = "Bearer s3cret-upstream-token"
	for _, tc := range []struct {
		name    string
		headers []string
		secrets []string
		want    string
	}{
		{"free text dropped", []string{`Bearer realm="up", error="invalid_token", error_description="bad token Bearer s3cret-upstream-token"`}, nil,
			`Bearer realm="up", error="invalid_token"`},
		{"scope dropped", []string{`Bearer error="insufficient_scope", scope="Bearer s3cret-upstream-token"`}, nil,
			`Bearer error="insufficient_scope"`},
		{"resource_metadata kept", []string{`Bearer resource_metadata="https://up.example/.well-known/oauth-protected-resource"`}, nil,
			`Bearer resource_metadata="https://up.example/.well-known/oauth-protected-resource"`},
		{"realm echoing the token", []string{`Bearer realm="s3cret-upstream-token", error="invalid_token"`}, nil,
			`Bearer error="invalid_token"`},
		{"realm holding a piece of the token", []string{`Bearer realm="upstream-tok"`}, nil, `Bearer`},
		{"error code echoing the token", []string{`Bearer error="s3cret-upstream-token"`}, nil, `Bearer`},
		{"error code of free text", []string{`Bearer error="no such token"`}, nil, `Bearer`},
		{"URL carrying the token", []string{`Bearer resource_metadata="https://up.example/m?t=s3cret-upstream-token"`}, nil, `Bearer`},
		{"URL with user info", []string{`Bearer resource_metadata="https://u:p@up.example/m"`}, nil, `Bearer`},
		{"not an http URL", []string{`Bearer resource_metadata="javascript:alert(1)"`}, nil, `Bearer`},
		{"scheme echoing the token", []string{`s3cret-upstream-token realm="x"`}, nil, ``},
		{"long realm", []string{`Bearer realm="` + strings.Repeat("r", maxRealm+1) + `"`}, nil, `Bearer`},
		{"control characters", []string{"Bearer realm=\"a\x1bb\""}, nil, `Bearer`},
		{"another configured secret", []string{`Bearer realm="other-server-secret"`}, []string{"other-server-secret"}, `Bearer`},
		{"several headers", []string{`Basic realm="b"`, `Bearer realm="r"`}, nil, `Basic realm="b", Bearer realm="r"`},
		{"at most four", []string{`A, B, C, D, E`}, nil, `A, B, C, D`},
		{"none", nil, nil, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept := keptChallenges(tc.headers, []string{sent}, redact.New(tc.secrets...))
			parts := make([]string, len(kept))
			for i, c := range kept {
				parts[i] = c.String()
			}
			if got := strings.Join(parts, ", "); got != tc.want {
				t.Errorf("keptChallenges(%q) = %s, want %s", tc.headers, got, tc.want)
			}
		})
	}
}

func FuzzParseChallenges(f *testing.F) {
	f.Add(`Bearer realm="up", error="invalid_token", error_description="x"`)
	f.Add(`Negotiate YII/+abc==, Basic realm="a \"b\""`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range keptChallenges([]string{s}, []string{"Bearer secret-token-value"}, nil) {
			if out := c.String(); strings.Contains(out, "secret-token-value") || !printable(strings.ReplaceAll(out, `"`, "")) {
				t.Errorf("kept %q of %q", out, s)
			}
		}
	})
}

// TestKeptChallengeScopes: the scope parameter of a challenge (what a
// step-up sign-in asks for) is kept as its scope tokens, and dropped
// whole when one of them holds what toolscout sent or is not a short
// printable scope token.
func TestKeptChallengeScopes(t *testing.T) {
	const sent = "Bearer s3cret-upstream-token"
	for _, tc := range []struct {
		name, header string
		want         []string
	}{
		{"kept", `Bearer error="insufficient_scope", scope="read  write"`, []string{"read", "write"}},
		{"echoing the token", `Bearer error="insufficient_scope", scope="read s3cret-upstream-token"`, nil},
		{"a piece of the token", `Bearer scope="upstream-tok"`, nil},
		{"too long", `Bearer scope="` + strings.Repeat("s", maxScopeToken+1) + `"`, nil},
		{"too many", `Bearer scope="` + strings.Repeat("s ", maxScopes+1) + `"`, nil},
		{"control characters", "Bearer scope=\"read\x1bwrite\"", nil},
		{"none", `Bearer error="invalid_token"`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept := keptChallenges([]string{tc.header}, []string{sent}, redact.New())
			if len(kept) != 1 || !slices.Equal(kept[0].scopes, tc.want) {
				t.Errorf("keptChallenges(%q) = %+v, want scopes %q", tc.header, kept, tc.want)
			}
		})
	}
}
