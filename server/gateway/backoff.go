package gateway

import "time"

// restartBackoff is the wait before reconnecting an upstream. It doubles
// from min up to max after each attempt that did not last: a failed
// connect, or a session that ended within stable of connecting. Only a
// session that stayed up for stable starts it over from min. Resetting on
// every successful connect restarted a server that dies right after
// initialize once a second, forever.
type restartBackoff struct {
	min, max, stable time.Duration
	wait             time.Duration // the last wait; 0 before the first
}

// next returns the wait before the next attempt, after one that stayed up
// for up (0 for a connect that failed).
func (b *restartBackoff) next(up time.Duration) time.Duration {
	switch {
	case up >= b.stable || b.wait == 0:
		b.wait = b.min
	default:
		b.wait = min(b.wait*2, b.max)
	}
	return b.wait
}
