//go:build race

package codemode

// raceBuild: the race detector maps terabytes of shadow memory, so the
// sandbox's address-space limit is left off in such builds (tests).
const raceBuild = true
