package main

import (
	"context"
	"errors"
	"io"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("serve: not built yet")
}
func runTokens(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("tokens: not built yet")
}
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("doctor: not built yet")
}
