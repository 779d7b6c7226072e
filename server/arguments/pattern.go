package arguments

import (
	"regexp/syntax"
	"strings"
	"unicode"
)

// maxPatternLength bounds the string matchingString builds.
const maxPatternLength = 64

// matchingString returns a short string that a simple pattern matches:
// literals as they are, a class's first letter or digit, the fewest
// repeats (one for * and ?, so that "[A-Z]+-[0-9]*" gives "A-0"), an
// alternation's first branch. ok is false for what it cannot build
// (back references, look-around the Go syntax has none of) or a string
// longer than maxPatternLength.
func matchingString(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !writeMatch(&b, re.Simplify()) || b.Len() > maxPatternLength {
		return "", false
	}
	return b.String(), true
}

func writeMatch(b *strings.Builder, re *syntax.Regexp) bool {
	if b.Len() > maxPatternLength {
		return false
	}
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
		return true
	case syntax.OpCharClass:
		r, ok := classRune(re.Rune)
		if ok {
			b.WriteRune(r)
		}
		return ok
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
		return true
	case syntax.OpCapture:
		return writeMatch(b, re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return writeMatch(b, re.Sub[0])
	case syntax.OpRepeat:
		n := re.Min
		if n == 0 && re.Max != 0 {
			n = 1
		}
		for range n {
			if !writeMatch(b, re.Sub[0]) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !writeMatch(b, sub) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		return writeMatch(b, re.Sub[0])
	}
	return false
}

// classRune picks a readable rune of a class given as ranges: a lower
// case letter, else a digit, else an upper case letter, else the first.
func classRune(ranges []rune) (rune, bool) {
	if len(ranges) < 2 {
		return 0, false
	}
	for _, want := range []func(rune) bool{unicode.IsLower, unicode.IsDigit, unicode.IsUpper} {
		for i := 0; i+1 < len(ranges); i += 2 {
			for r := ranges[i]; r <= ranges[i+1] && r < ranges[i]+128; r++ {
				if r < unicode.MaxASCII && want(r) {
					return r, true
				}
			}
		}
	}
	return ranges[0], true
}
