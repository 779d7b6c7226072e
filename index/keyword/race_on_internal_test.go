//go:build race

package keyword

// raceBuild: under the race detector sync.Pool drops a share of what it
// is given at random, so tests of what the pools save skip there.
const raceBuild = true
