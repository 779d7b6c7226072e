package server

import (
	"fmt"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/server/arguments"
)

// toolStatus is what the executor says of a tool, for the answers that
// describe it: whether it holds the tool back, whether a program could
// call it, the examples of its arguments.
type toolStatus struct {
	exec Executor // nil: every tool is catalog-only
}

// held reports whether the executor holds t back (HeldReporter).
func (s toolStatus) held(t *index.Tool) bool {
	h, ok := ability[HeldReporter](s.exec)
	return ok && h.Held(t.Domain, t.Name)
}

// heldNote says why a held tool does not run: its definition changed,
// or the record of approved definitions was damaged (UncheckedReporter).
func (s toolStatus) heldNote(t *index.Tool) string {
	if u, ok := ability[UncheckedReporter](s.exec); ok && u.Unchecked(t.Domain, t.Name) {
		return fmt.Sprintf("toolscout's record of the approved tool definitions was damaged, so this tool's definition cannot be checked; it does not run until an operator reviews and approves it (toolscout approve %s). Shown: the definition its server lists now", t.QualifiedName)
	}
	return fmt.Sprintf("its server changed this tool's definition since it was approved; it does not run until an operator approves the change (toolscout approve %s). Shown: the approved definition", t.QualifiedName)
}

// runnable reports whether a program could call t: the executor runs
// its domain, and does not hold t back (a definition awaiting approval).
func (s toolStatus) runnable(t *index.Tool) bool {
	if s.exec == nil || t.Disabled || s.held(t) {
		return false
	}
	r, ok := ability[ExecutableReporter](s.exec)
	return !ok || r.Executable(t.Domain)
}

// examples are the tool's examples (arguments.Examples), their paths
// inside its server's folders when the executor knows them.
func (s toolStatus) examples(t *index.Tool) []arguments.Example {
	var roots []string
	if fr, ok := ability[FolderReporter](s.exec); ok {
		roots = fr.Folders(t.Domain)
	}
	return arguments.ExamplesWithin(t, roots)
}

// entry is t's entry in a listing or a ranked answer, marked held
// when the executor holds it back.
func (s toolStatus) entry(t *index.Tool) ToolEntry {
	e := ToolEntry{Name: t.QualifiedName, Group: t.Group, Summary: t.Summary, Warnings: t.Warnings(),
		Deprecated: index.Deprecation(t.Deprecated), Disabled: t.Disabled}
	if s.held(t) {
		e.Held = heldEntryNote(t)
	}
	return e
}
