//go:build !race

package vector

// raceBuild: this test binary has the race detector (go test -race).
const raceBuild = false
