package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// The suites: the fixture's, by the requirement set the suite runs, and
// the scenarios that need no fixture against the built-in catalog.
const (
	suite20251125 = "2025-11-25"
	suite20260728 = "2026-07-28"
	suiteBuiltin  = "builtin"
	// suiteClientAuth is the suite's client-side auth scenarios, with
	// toolscout's upstream OAuth client (cmd/conformance/authclient) as
	// the client.
	suiteClientAuth = "client-auth"
)

var knownSuites = []string{suite20251125, suite20260728, suiteBuiltin, suiteClientAuth}

// parseSuites parses -suites.
func parseSuites(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(knownSuites, f) {
			return nil, fmt.Errorf("-suites: unknown suite %q: use %s", f, strings.Join(knownSuites, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-suites: none given: use %s", strings.Join(knownSuites, ", "))
	}
	return out, nil
}

// entry is one line of expected-failures.txt or lost.txt: a scenario of
// a suite, or one check of it, and why it fails.
type entry struct {
	suite, scenario, check, why string
	file                        string
	line                        int
}

// key is what the entry covers: "suite scenario" or "suite scenario:check".
func (e entry) key() string {
	if e.check != "" {
		return e.suite + " " + e.scenario + ":" + e.check
	}
	return e.suite + " " + e.scenario
}

func (e entry) String() string { return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.key()) }

var scenarioRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// readEntries reads an entries file: "SUITE SCENARIO[:CHECK] why", one a
// line; empty lines and lines starting with # are skipped. The why is
// required: an entry nobody can explain is one nobody will remove.
func readEntries(file string) ([]entry, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []entry
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			return nil, fmt.Errorf("%s:%d: want \"SUITE SCENARIO[:CHECK] why it fails\", got %q", file, n, line)
		}
		e := entry{suite: fields[0], why: strings.Join(fields[2:], " "), file: file, line: n}
		e.scenario, e.check, _ = strings.Cut(fields[1], ":")
		if !slices.Contains(knownSuites, e.suite) {
			return nil, fmt.Errorf("%s:%d: unknown suite %q: use %s", file, n, e.suite, strings.Join(knownSuites, ", "))
		}
		if !scenarioRE.MatchString(e.scenario) || strings.Contains(fields[1], ":") && !scenarioRE.MatchString(e.check) {
			return nil, fmt.Errorf("%s:%d: %q is not a scenario name (lower case, digits, dashes) with an optional :check-id", file, n, fields[1])
		}
		if prev, dup := seen[e.key()]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed on line %d already", file, n, e.key(), prev)
		}
		seen[e.key()] = n
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return out, nil
}
