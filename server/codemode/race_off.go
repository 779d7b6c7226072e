//go:build !race

package codemode

const raceBuild = false
