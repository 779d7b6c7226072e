//go:build race

package server

// raceBuild: this test binary has the race detector (go test -race).
const raceBuild = true
