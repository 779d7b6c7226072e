// Package pin holds each upstream tool to the definition approved for it:
// the defence against an upstream server that changes a tool's
// description or schema after it was trusted (a "rug pull").
//
// The first definition seen of each tool (its name, title, description,
// input and output schemas and annotations: a [Definition]) is recorded in
// a [Book] with its hash, and served. A later listing whose definition
// hashes differently is held back: [Book.Check] returns the approved
// definition to serve instead and records the listed one as pending, so
// that it can be shown as a unified diff ([Held.Diff]) and approved
// ([Book.Approve]) by an operator (toolscout approve). A tool never seen is
// accepted and pinned on first sight, except under [Review]: a book
// rebuilt after its file was damaged holds a tool it does not know until
// an operator approves it, as damage must never approve anything. What the config says of a tool
// (its group, whether it is disabled or deprecated) is not part of its
// definition: the config is the operator's own.
//
// Place in the flow: beside index, below everything else. The book is
// plain data; index/store keeps it in the data dir (pins.bin, written
// whole under a lock so that serve and toolscout approve can share it),
// and a [Guard] joins the two for server/gateway, which asks it what to
// serve each time a server lists its tools and refuses to run a held
// tool.
//
//	g := pin.NewGuard(st.Pins()) // st is an index/store Store
//	res, err := g.Pin("memory", listed)
//	serve := res.Serve           // the approved definitions
//	for _, h := range res.Held { log.Warn("held", "tool", h.Tool, "diff", h.Diff()) }
package pin
