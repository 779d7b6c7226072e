package main

import (
	"fmt"
	"slices"
)

// check compares the suites' results with the expected failures and the
// ratchet of losses, and returns what is wrong, one sentence each:
//
//   - a fixture suite's scenario that fails (or warns) directly and is not
//     in expected-failures, or is listed there and passes directly;
//   - a scenario lost through toolscout (lower grade than directly) and
//     not in lost.txt, or listed there and no longer lost;
//   - for builtin and client-auth (no direct run), a failing or warning
//     check that no entry of either file covers, or an entry that covers
//     nothing;
//   - an entry of a suite that ran for a scenario it did not run.
func check(results []suiteResult, expected, lost []entry) []string {
	var problems []string
	used := map[*entry]bool{}
	find := func(list []entry, suite, scenario, check string) *entry {
		for i := range list {
			e := &list[i]
			if e.suite == suite && e.scenario == scenario && (e.check == "" || e.check == check) {
				return e
			}
		}
		return nil
	}
	ran := map[string]bool{}
	for _, r := range results {
		ran[r.suite] = true
		for _, s := range r.scenarios {
			if s.direct == nil {
				problems = append(problems, checkBuiltin(r.suite, s, expected, lost, find, used)...)
				continue
			}
			exp := find(expected, r.suite, s.name, "")
			switch {
			case s.direct.grade() < gradePass && exp == nil:
				problems = append(problems, fmt.Sprintf("%s %s fails directly against the fixture (%s) and is not in %s: list it there with why, if the fixture is meant to fail it", r.suite, s.name, describe(*s.direct), fileOf(expected, "conformance/expected-failures.txt")))
			case s.direct.grade() == gradePass && exp != nil:
				problems = append(problems, fmt.Sprintf("%s passes directly now: remove it from expected failures", exp))
			}
			if exp != nil {
				used[exp] = true
			}
			l := find(lost, r.suite, s.name, "")
			switch {
			case s.lost() && l == nil:
				problems = append(problems, fmt.Sprintf("%s %s passes directly (%s) but not through toolscout (%s): a loss not in %s", r.suite, s.name, describe(*s.direct), describe(s.through), fileOf(lost, "conformance/lost.txt")))
			case !s.lost() && l != nil:
				problems = append(problems, fmt.Sprintf("%s passes through toolscout now: remove it from the list (it only shrinks)", l))
			}
			if l != nil {
				used[l] = true
			}
		}
	}
	for _, list := range [][]entry{expected, lost} {
		for i := range list {
			e := &list[i]
			if ran[e.suite] && !used[e] {
				problems = append(problems, fmt.Sprintf("%s: covers nothing that failed in this run (a scenario or check not run, or one that passed): remove it", e))
			}
		}
	}
	return problems
}

// checkBuiltin checks a scenario run against toolscout alone: each check
// that failed or warned must be covered by an entry (the scenario's, or
// the check's), from either file.
func checkBuiltin(suite string, s scenarioResult, expected, lost []entry, find func([]entry, string, string, string) *entry, used map[*entry]bool) []string {
	var problems []string
	if !s.through.ran {
		for _, list := range [][]entry{expected, lost} {
			if e := find(list, suite, s.name, ""); e != nil && e.check == "" {
				used[e] = true
				return nil
			}
		}
		return []string{fmt.Sprintf("%s %s saved no result", suite, s.name)}
	}
	for _, c := range slices.Concat(s.through.failed, s.through.warnings) {
		covered := false
		for _, list := range [][]entry{expected, lost} {
			if e := find(list, suite, s.name, c); e != nil {
				used[e] = true
				covered = true
			}
		}
		if !covered {
			against := "against toolscout on the built-in catalog"
			if suite == suiteClientAuth {
				against = "with toolscout's upstream OAuth client as the client"
			}
			problems = append(problems, fmt.Sprintf("%s %s: check %s fails %s and no entry covers it", suite, s.name, c, against))
		}
	}
	return problems
}

// describe says how an outcome went, briefly.
func describe(o outcome) string {
	switch {
	case !o.ran:
		return "no result"
	case len(o.failed) > 0:
		if o.message != "" {
			return fmt.Sprintf("failed %v: %.160s", o.failed, o.message)
		}
		return fmt.Sprintf("failed %v", o.failed)
	case len(o.warnings) > 0:
		return fmt.Sprintf("warned %v", o.warnings)
	}
	return "passed"
}

// fileOf names the file entries came from, for messages.
func fileOf(list []entry, fallback string) string {
	if len(list) > 0 {
		return list[0].file
	}
	return fallback
}
