package codemode

import "strings"

// Ident returns name as a JavaScript identifier, the way a program
// writes a domain or tool: every character outside [A-Za-z0-9_$]
// becomes "_", and a leading digit gets a "_" before it
// ("get-sum" → get_sum, "2fa" → _2fa). A program may also write the
// name itself in brackets: tools["everything"]["get-sum"].
func Ident(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
		default:
			r = '_'
		}
		b.WriteRune(r)
	}
	return b.String()
}
