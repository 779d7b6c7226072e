//go:build !race

package keyword

// raceBuild: see race_on_internal_test.go.
const raceBuild = false
