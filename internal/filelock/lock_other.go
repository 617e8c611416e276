//go:build !unix

package filelock

import "os"

// Lock takes no lock where flock is missing: it always succeeds.
func Lock(*os.File) (int, error) { return 0, nil }

// Supported reports whether Lock really locks here: not on this system.
const Supported = false
