package condense

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxWords is the most words a summary holds. Nine words, without
// articles, say what a tool does ("Get contents of file or directory in
// repository."); a compact listing's entry is mostly its name and its
// required properties, and issue 35's 45 tokens a tool leave a summary
// about six tokens.
const MaxWords = 9

// minWords is the fewest words a clause cut may leave: fewer rarely say
// what a tool does, and a cut between words is better then.
const minWords = 4

// Summary condenses desc into a headline of at most MaxWords words: the
// main clause of the first sentence of its first paragraph, without its
// asides (parentheses, "e.g. ..."), without the detail after a colon or
// a semicolon, a trailing modifier after a comma ("..., filtered by
// status") or "with its ..." (see mainClause), and without articles and
// possessive determiners (see headline); whole when it fits; else cut at
// the last clause boundary that keeps at least half of it (a comma that
// does not separate the items of a list, a semicolon, a dash, or a word
// such as "which" that opens a clause), else at a prepositional phrase,
// else at "and", "or" (not before a list's last item) or "of", else
// after MaxWords words; a cut never leaves a word such as "and", "of" or
// "to" at the end, nor half a quotation. A deprecation notice of the
// description ("DEPRECATED: Use read_text_file instead.") comes first,
// in up to MaxWords/2 words, so that the summary still says it.
func Summary(desc string) string { return SummaryFor(desc, "") }

// SummaryFor is Summary for a listing that shows the summary beside a
// name holding known (a tool's domain), which the summary need not
// repeat: known, as the proper name of what the next word names ("List
// Linear issues" in domain linear), is left out ("List issues").
func SummaryFor(desc, known string) string {
	sentences := splitSentences(firstParagraph(desc))
	if len(sentences) == 0 {
		return ""
	}
	first, notice := sentences[0], ""
	for i, s := range sentences {
		if !deprecation(s) {
			continue
		}
		notice = fit(normalizeNotice(s), MaxWords/2)
		if i == 0 {
			first = ""
			if len(sentences) > 1 {
				first = sentences[1]
			}
		}
		break
	}
	first = headline(mainClause(first), known)
	switch {
	case notice == "":
		return fit(first, MaxWords)
	case first == "":
		return notice
	}
	if !strings.HasSuffix(notice, ".") {
		notice += "."
	}
	return notice + " " + fit(first, MaxWords-len(strings.Fields(notice)))
}

// firstParagraph returns desc up to its first blank line, or up to a
// line that opens a list or a section ("- ", "# ", "Args:"), with white
// space folded to single spaces.
func firstParagraph(desc string) string {
	var kept []string
	for i, line := range strings.Split(desc, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			if len(kept) > 0 {
				break
			}
			continue
		}
		if i > 0 && len(kept) > 0 && opensBlock(line) {
			break
		}
		kept = append(kept, line)
	}
	return strings.Join(strings.Fields(strings.Join(kept, " ")), " ")
}

// opensBlock reports whether a line starts a list item, a heading, a
// table, a quote or a docstring section ("Args:", "Returns:").
func opensBlock(line string) bool {
	switch line[0] {
	case '-', '*', '#', '|', '>':
		return true
	}
	w, _, _ := strings.Cut(line, " ")
	switch strings.ToLower(w) {
	case "args:", "arguments:", "parameters:", "params:", "returns:", "raises:", "example:", "examples:", "note:", "notes:", "usage:":
		return true
	}
	return false
}

// splitSentences splits text at a period, question or exclamation mark
// followed by a space and a capital, a digit, a quote or a bracket,
// except after an abbreviation ("e.g.").
func splitSentences(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.', '!', '?':
		default:
			continue
		}
		if i+1 < len(s) && (s[i+1] != ' ' || i+2 >= len(s) || !opensSentence(s[i+2:])) {
			continue
		}
		if s[i] == '.' && abbreviation(s[start:i]) {
			continue
		}
		if t := strings.TrimSpace(s[start : i+1]); t != "" {
			out = append(out, t)
		}
		start = i + 1
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

func opensSentence(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r) || unicode.IsDigit(r) || strings.ContainsRune("\"'`([*", r)
}

// abbreviation reports whether the text before a period ends with an
// abbreviation that does not end a sentence.
func abbreviation(before string) bool {
	w := before[strings.LastIndexByte(before, ' ')+1:]
	switch strings.ToLower(strings.TrimLeft(w, "(")) {
	case "e.g", "i.e", "etc", "vs", "approx", "incl", "cf", "no", "mr", "ms", "dr", "st":
		return true
	}
	return false
}

// deprecation reports whether a sentence is a deprecation notice.
func deprecation(s string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimLeft(s, "*_ ")), "deprecated")
}

// normalizeNotice writes a shouted DEPRECATED as Deprecated.
func normalizeNotice(s string) string {
	s = strings.TrimLeft(s, "*_ ")
	if strings.HasPrefix(s, "DEPRECATED") {
		s = "Deprecated" + s[len("DEPRECATED"):]
	}
	return strings.Replace(s, "Deprecated**", "Deprecated", 1)
}

// mainClause returns what a sentence says before the detail that
// follows its main clause, as the sentence's end: a list or an aside
// after a colon or a semicolon ("Describe table: columns, types, ..."),
// a trailing modifier after a comma ("List invoices, filtered by
// customer or status."), and what "with its" or "with their" adds to the
// object ("Get pull request with its status, mergeability and
// reviewers."). It keeps at least two words; a comma that separates the
// items of a list ("Export Doc, Sheet or Slides file") is no boundary.
func mainClause(sentence string) string {
	end := ""
	if strings.HasSuffix(sentence, ".") {
		end = "."
	}
	s := withoutAsides(sentence, end)
	if len(strings.Fields(s)) < minWords {
		s = sentence
	}
	words := strings.Fields(s)
	for i := 2; i < len(words); i++ {
		prev, w := words[i-1], strings.ToLower(words[i])
		cut := strings.HasSuffix(prev, ":") || strings.HasSuffix(prev, ";") ||
			strings.HasSuffix(prev, ",") && modifierOpener(w) ||
			w == "including" ||
			w == "with" && i+1 < len(words) && (strings.EqualFold(words[i+1], "its") || strings.EqualFold(words[i+1], "their"))
		if !cut {
			continue
		}
		kept := trimDangling(words[:i])
		if len(kept) >= 2 {
			return strings.Join(kept, " ") + end
		}
	}
	return s
}

// modifierOpener reports whether a word after a comma opens a trailing
// modifier rather than the next item of a list.
func modifierOpener(w string) bool {
	switch w {
	case "filtered", "sorted", "ordered", "grouped", "including", "keeping", "with", "without", "optionally", "per", "most", "e.g.", "i.e.", "such", "which", "where", "when", "so", "returning", "showing", "using", "based", "allowing", "like", "as", "then", "if", "unless", "by":
		return true
	}
	return false
}

// headline drops from a sentence the words a headline does without,
// which take a token each and say nothing a model needs to pick a tool:
// the articles ("a", "an", "the"), the possessive determiners ("its",
// "their", "your"), and known (the domain that the tool's name begins
// with) where it names what the next word is ("List Linear issues" under
// linear). "Create an S3 bucket in a region." is listed as "Create S3
// bucket in region." A word is dropped in lower case, or capitalized as
// the sentence's first word (known: capitalized, and not first, last or
// before a preposition: "Search errors in Sentry by message" keeps it);
// the words inside quotes or backticks stay. When the first word goes,
// the next one takes its capital.
func headline(sentence, known string) string {
	words := strings.Fields(sentence)
	kept := make([]string, 0, len(words))
	quoted := false
	for i, w := range words {
		if !quoted && (functionWord(w, i == 0) || i > 0 && i+1 < len(words) && qualifier(w, words[i+1], known)) {
			continue
		}
		if strings.Count(w, "\"")%2 == 1 || strings.Count(w, "`")%2 == 1 {
			quoted = !quoted
		}
		kept = append(kept, w)
	}
	if len(kept) == 0 || len(kept) == len(words) {
		return sentence
	}
	if functionWord(words[0], true) {
		r, n := utf8.DecodeRuneInString(kept[0])
		kept[0] = string(unicode.ToUpper(r)) + kept[0][n:]
	}
	return strings.Join(kept, " ")
}

// functionWord reports whether w is an article or a possessive
// determiner that headline drops: in lower case, or capitalized when it
// opens the sentence.
func functionWord(w string, opens bool) bool {
	switch w {
	case "a", "an", "the", "its", "their", "your":
		return true
	case "A", "An", "The", "Its", "Their", "Your":
		return opens
	}
	return false
}

// qualifier reports whether w is known (a domain's name, whose '-' and
// '_' a word leaves out: "aws-s3" is "AWS S3" or "AWSS3") written as a
// proper name before the word next that it qualifies.
func qualifier(w, next, known string) bool {
	if known == "" || !unicode.IsUpper([]rune(w)[0]) || strings.ContainsAny(w, ",.;:'’\"`") {
		return false
	}
	k := strings.NewReplacer("-", "", "_", "").Replace(known)
	if !strings.EqualFold(w, k) {
		return false
	}
	switch strings.ToLower(strings.TrimRight(next, ",.;:")) {
	case "and", "or", "but", "nor", "to", "for", "with", "without", "by", "at", "in", "on", "from", "into", "of", "as", "via", "across", "over", "under", "is", "are":
		return false
	}
	return true
}

// fit returns sentence in at most max words (see Summary).
func fit(sentence string, max int) string {
	sentence = strings.TrimSuffix(sentence, ":")
	end := ""
	if strings.HasSuffix(sentence, ".") {
		end = "."
	}
	s := withoutAsides(sentence, end)
	if len(strings.Fields(s)) < minWords {
		s = sentence // all aside: better whole
	}
	words := strings.Fields(s)
	if len(words) <= max {
		return s
	}
	kept := trimDangling(words[:cutAt(words, max)])
	if len(kept) == 0 {
		kept = words[:max]
	}
	return strings.Join(kept, " ") + end
}

// cutAt returns how many of words (more than max) a cut keeps: the last
// boundary of the best kind (see below) that keeps at least half of max
// words, else of any kind that keeps minWords, else max.
func cutAt(words []string, max int) int {
	for _, least := range []int{max / 2, minWords} {
		for kind := clause; kind <= of; kind++ {
			for i := max; i >= least; i-- {
				if boundary(words, i) == kind && !quoting(words[:i]) && len(trimDangling(words[:i])) >= least {
					return i
				}
			}
		}
	}
	return max
}

// Kinds of boundary before a word, from the best place to cut to the
// worst.
const (
	none   = iota
	clause // after a comma, semicolon or colon; a dash; "which", "including"
	phrase // a prepositional phrase: "in", "for", "at"
	pair   // "and", "or": a cut keeps half of a pair
	of     // "of": a cut keeps a head without what it is of
)

// boundary says what starts at words[i]. A prepositional phrase does not
// start after a participle or an adverb ("identified by", "stored in",
// "currently on"), which would be left asking for it, nor at "on or
// off", nor at the "to" of "from ... to".
func boundary(words []string, i int) int {
	prev := strings.ToLower(words[i-1])
	w := strings.ToLower(words[i])
	if strings.ContainsAny(prev[len(prev)-1:], ",;:") && !listComma(words, i) {
		return clause
	}
	switch w {
	case "-", "–", "—", "which", "that", "who", "whose", "including", "includes", "allowing", "so", "while", "where", "when", "whether", "if", "unless", "because", "since", "although", "though", "using", "via", "e.g.", "i.e.", "such", "like":
		return clause
	case "to", "for", "with", "without", "by", "at", "in", "on", "from", "into", "within", "across", "per", "after", "before", "based", "according", "depending",
		"as", "between", "among", "under", "over", "near", "through", "about", "against", "until", "toward", "towards":
		switch {
		case strings.HasSuffix(prev, "ed"), strings.HasSuffix(prev, "ing"), strings.HasSuffix(prev, "ly"),
			i+1 < len(words) && (strings.EqualFold(words[i+1], "or") || strings.EqualFold(words[i+1], "and")),
			w == "to" && containsFold(words[:i], "from"):
			return none
		}
		return phrase
	case "and", "or", "but", "then":
		if closesList(words, i) {
			return none // a cut would keep a list without its last item
		}
		return pair
	case "of":
		return of
	}
	return none
}

// listComma reports whether the comma before words[i] separates the items
// of a list ("driving, walking, cycling or transit"): the next item or
// two, each of at most two words, lead to "and" or "or", with no
// clause opener in between.
func listComma(words []string, i int) bool {
	if !strings.HasSuffix(words[i-1], ",") || modifierOpener(strings.ToLower(words[i])) {
		return false
	}
	if w := strings.ToLower(words[i]); w == "and" || w == "or" {
		return true // the comma before a list's last item
	}
	for j, n := i, 0; j < len(words) && n < 5; j, n = j+1, n+1 {
		w := strings.ToLower(words[j])
		if j > i && (w == "and" || w == "or") {
			return true
		}
		if strings.ContainsAny(w, ";:.") || modifierOpener(w) && j > i {
			return false
		}
	}
	return false
}

// closesList reports whether the "and" or "or" at words[i] ends a list
// whose items a comma separates ("labels, archives or forwards").
func closesList(words []string, i int) bool {
	for j := i - 1; j >= 1 && j >= i-3; j-- {
		if strings.HasSuffix(words[j-1], ",") && listComma(words, j) {
			return true
		}
	}
	return false
}

// quoting reports whether words leave a double quote or a backtick open:
// a cut there would keep half a quotation.
func quoting(words []string) bool {
	s := strings.Join(words, " ")
	return strings.Count(s, "\"")%2 == 1 || strings.Count(s, "`")%2 == 1
}

// containsFold reports whether words holds w, in any case.
func containsFold(words []string, w string) bool {
	for _, x := range words {
		if strings.EqualFold(x, w) {
			return true
		}
	}
	return false
}

// trimDangling drops from the end of words the punctuation and the words
// that would leave a cut summary hanging, and an opening bracket or quote
// without its closing one.
func trimDangling(words []string) []string {
	words = append([]string(nil), words...)
	for len(words) > 0 {
		last := len(words) - 1
		w := strings.TrimRight(words[last], ",;:-–—")
		if w == "" || danglingWord(w) || unclosed(w) {
			words = words[:last]
			continue
		}
		words[last] = w
		break
	}
	return words
}

// danglingWord reports whether a summary cannot end on w: a conjunction,
// an article, a preposition, a determiner or a word that asks for more.
func danglingWord(w string) bool {
	switch strings.ToLower(w) {
	case "and", "or", "nor", "but", "the", "a", "an", "of", "to", "for", "with", "without", "in", "into", "on", "onto", "at", "by", "from", "as", "about", "over", "under", "between", "across", "through", "via", "per",
		"that", "which", "who", "whose", "its", "their", "his", "her", "your", "our", "my", "this", "these", "those", "each", "every", "all", "any", "some", "either", "neither", "both",
		"than", "then", "whether", "if", "when", "while", "where", "including", "such", "e.g.", "i.e.", "is", "are", "was", "be", "can", "will", "may", "must", "should", "not", "no", "so", "also", "like", "using",
		"based", "according", "depending", "due", "prior", "regardless", "allowing", "enabling", "letting", "making", "providing", "giving", "helping", "helpful", "intended", "used", "able", "up", "along", "how", "what", "why":
		return true
	}
	return false
}

// unclosed reports whether w opens a bracket or a quote that it does not
// close.
func unclosed(w string) bool {
	for _, p := range [...][2]string{{"(", ")"}, {"[", "]"}, {"{", "}"}, {"\"", "\""}} {
		if n := strings.Count(w, p[0]); p[0] == p[1] && n%2 == 1 || p[0] != p[1] && n > strings.Count(w, p[1]) {
			return true
		}
	}
	return false
}

// withoutAsides removes from a sentence what a summary can do without:
// balanced (...) and [...] groups, and examples ("e.g. ...", "for
// example ...", "i.e. ...") up to the next semicolon or the end, where
// end (the sentence's final punctuation) is put back.
func withoutAsides(s, end string) string {
	lower := strings.ToLower(s)
	for _, marker := range []string{"e.g.", "i.e.", "for example", "for instance"} {
		i := strings.Index(lower, marker)
		if i < 0 || i > 0 && lower[i-1] != ' ' {
			continue // absent, inside a word, or in parentheses (below)
		}
		stop := len(s)
		if j := strings.IndexByte(s[i:], ';'); j >= 0 {
			stop = i + j
		}
		s = strings.TrimRight(s[:i], " ,;:(-–—") + s[stop:]
		if !strings.HasSuffix(s, end) {
			s += end
		}
		lower = strings.ToLower(s)
	}
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(' || r == '[':
			depth++
		case (r == ')' || r == ']') && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	if depth != 0 {
		return s // unbalanced: keep the text as it is
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	for _, p := range []string{" ,", " .", " ;", " :"} {
		out = strings.ReplaceAll(out, p, p[1:])
	}
	return out
}
