//go:build !unix

package cli

import (
	"context"
	"errors"
)

// ttyWaitable says that a terminal read cannot be waited on here (no
// poll(2)): the asker reads a terminal as any other input.
const ttyWaitable = false

// errNoPoll says that waiting for a terminal line cannot be given up on
// here: the asker reads such a terminal as any other input (lineCtx).
var errNoPoll = errors.New("waiting for terminal input with a deadline is not supported on this system")

// waitReadable is not available without poll(2).
func waitReadable(context.Context, int) error { return errNoPoll }

// flushInput is not available without poll(2).
func flushInput(int) error { return errNoPoll }
