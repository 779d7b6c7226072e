//go:build !race

package racetest

// Enabled: this binary has the race detector.
const Enabled = false
