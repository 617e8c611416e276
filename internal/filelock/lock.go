// Package filelock takes exclusive advisory locks on open files, so that
// two processes (or two opens in one process) never write one file.
package filelock

import "errors"

// ErrLocked: another open file description (another process, or another
// open in this one) holds the lock.
var ErrLocked = errors.New("locked by another process")
