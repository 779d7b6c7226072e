package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// outcome is how one scenario went: the ids of its checks that failed
// and of those that warned (a SHOULD the server does not do). The suite
// counts both against a baseline; its summary's ✓ means no failure.
type outcome struct {
	ran              bool // the suite saved a result for it
	failed, warnings []string
	// message is the first failure's message, for the report.
	message string
}

// Grades of an outcome, compared to tell a loss: a scenario is lost
// through toolscout when it grades lower there than directly.
const (
	gradeFail = iota // a check failed, or no result
	gradeWarn        // no check failed, one warned
	gradePass        // every check passed
)

func (o outcome) grade() int {
	switch {
	case !o.ran || len(o.failed) > 0:
		return gradeFail
	case len(o.warnings) > 0:
		return gradeWarn
	}
	return gradePass
}

// passed reports what the suite's summary marks ✓: no check failed.
func (o outcome) passed() bool { return o.grade() > gradeFail }

// check is one entry of a scenario's checks.json.
type checkResult struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// dirRE is the folder the suite saves a server scenario's checks in:
// server-<scenario>-<ISO time with dashes>.
var dirRE = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// clientDirRE is the folder, under auth/ of -o, it saves a client auth
// scenario's checks in: <scenario without auth/>-<ISO time with dashes>.
var clientDirRE = regexp.MustCompile(`^(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// readResults reads the suite's results folder (-o) of server
// scenarios: one outcome per scenario that saved one. A scenario run
// twice is an error (each run gets its own folder).
func readResults(dir string) (map[string]outcome, error) { return readResultsOf(dir, dirRE) }

// readClientAuthResults reads the results folder (-o) of client auth
// scenarios, by the scenario's name without auth/.
func readClientAuthResults(dir string) (map[string]outcome, error) {
	return readResultsOf(filepath.Join(dir, "auth"), clientDirRE)
}

// readResultsOf reads the scenarios' folders in dir whose names re
// matches (its first group: the scenario).
func readResultsOf(dir string, re *regexp.Regexp) (map[string]outcome, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]outcome{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]outcome{}
	for _, e := range ents {
		m := re.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		name := m[1]
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s: scenario %s has two results: use a fresh folder per run", dir, name)
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			return nil, err
		}
		var checks []checkResult
		if err := json.Unmarshal(data, &checks); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, e.Name(), "checks.json"), err)
		}
		o := outcome{ran: true}
		for _, c := range checks {
			switch c.Status {
			case "FAILURE":
				o.failed = append(o.failed, c.ID)
				if o.message == "" {
					o.message = c.ErrorMessage
				}
			case "WARNING":
				o.warnings = append(o.warnings, c.ID)
			}
		}
		out[name] = o
	}
	return out, nil
}

// summaryRE is a line of the suite's SUMMARY: "✓ name: 3 passed, 0 failed".
var summaryRE = regexp.MustCompile(`^[✓✗] ([a-z0-9-]+): \d+ passed, \d+ failed$`)

// notScoredRE is a line of its "Not scored for ..." list: "  ✓ name (pending)".
var notScoredRE = regexp.MustCompile(`^  [✓✗] ([a-z0-9-]+) \(([a-z-]+)\)$`)

// parseStdout reads the scenarios a --requirements run ran (from its
// SUMMARY, in order) and those of them it does not score, with why
// (extension, pending, added-after-release).
func parseStdout(out string) (scenarios []string, notScored map[string]string) {
	notScored = map[string]string{}
	inSummary, inNotScored := false, false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case line == "=== SUMMARY ===":
			inSummary = true
			continue
		case strings.HasPrefix(line, "Not scored for "):
			inNotScored = true
			continue
		}
		if m := summaryRE.FindStringSubmatch(line); inSummary && m != nil {
			scenarios = append(scenarios, m[1])
		}
		if m := notScoredRE.FindStringSubmatch(line); inNotScored && m != nil {
			notScored[m[1]] = m[2]
		}
	}
	return scenarios, notScored
}

// scenarioResult is one scenario of a suite: directly against the
// fixture (when the suite has one) and through toolscout.
type scenarioResult struct {
	name      string
	notScored string // why the suite does not score it, or ""
	direct    *outcome
	through   outcome
}

// lost reports whether the scenario does worse through toolscout than
// directly.
func (s scenarioResult) lost() bool {
	return s.direct != nil && s.through.grade() < s.direct.grade()
}

// suiteResult is one suite's run.
type suiteResult struct {
	suite     string
	scenarios []scenarioResult
}

// merge makes a suite's scenarios from its runs: the scenarios of the
// run through toolscout (and of the direct one), in the suite's order.
func merge(suite string, order []string, notScored map[string]string, direct, through map[string]outcome) suiteResult {
	names := append([]string(nil), order...)
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	var extra []string
	for _, m := range []map[string]outcome{direct, through} {
		for n := range m {
			if !seen[n] {
				seen[n] = true
				extra = append(extra, n)
			}
		}
	}
	sort.Strings(extra)
	r := suiteResult{suite: suite}
	for _, n := range append(names, extra...) {
		s := scenarioResult{name: n, notScored: notScored[n], through: through[n]}
		if direct != nil {
			d := direct[n]
			s.direct = &d
		}
		r.scenarios = append(r.scenarios, s)
	}
	return r
}
