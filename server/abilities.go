package server

import "github.com/toolscout/toolscout/server/gateway"

// What the server asks of its Executor beyond Execute is found by type
// assertion (an optional interface each: UnavailableReporter,
// StatusReporter, serverStarter, passThrough, ...). The gateway does not
// carry them all itself: each is a method of one of its parts, reached
// through an accessor (gateway.Gateway.Upstreams, Directory, Surfaces),
// and ability looks there too. An Executor of another kind (a test's)
// may still have them itself.

// upstreamParts is an Executor that answers for its upstream servers
// through parts of its own: the gateway.
type upstreamParts interface {
	Upstreams() *gateway.Upstreams
	Directory() *gateway.Directory
	Surfaces() *gateway.Surfaces
}

var _ upstreamParts = (*gateway.Gateway)(nil)

// ability returns exec as an A when it is one, else the first of its
// parts that is one (upstreamParts); false when neither is, or exec is
// nil.
func ability[A any](exec any) (A, bool) {
	if a, ok := exec.(A); ok {
		return a, true
	}
	if p, ok := exec.(upstreamParts); ok {
		for _, part := range []any{p.Upstreams(), p.Directory(), p.Surfaces()} {
			if a, ok := part.(A); ok {
				return a, true
			}
		}
	}
	var none A
	return none, false
}
