// Package eval measures ranking strategies on labelled queries.
package eval
