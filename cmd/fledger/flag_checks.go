package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// atLeast refuses an integer flag below its least value, in one wording
// for every command: "FLAG V: WHAT is LEAST (NOTE) or more", e.g.
// "--limit -1: the number of turns is 0 (all) or more".
func atLeast(flag string, v, least int, what, note string) error {
	if v >= least {
		return nil
	}
	if note != "" {
		note = " (" + note + ")"
	}
	return fmt.Errorf("%s %d: %s is %d%s or more", flag, v, what, least, note)
}

// checkPort refuses a port flag outside 0 (none) to 65535.
func checkPort(flag string, v int) error {
	if v < 0 || v > 65535 {
		return fmt.Errorf("%s %d: a port is 1 to 65535 (0 = none)", flag, v)
	}
	return nil
}

// checkToSeq refuses an explicit --to-seq 0: stream sequences start at 1,
// so it could only mean nothing, and the stream's end is the flag left
// out (it used to be read as the end, the opposite of what was asked).
func checkToSeq(cmd *cobra.Command, v uint64) error {
	if v == 0 && cmd.Flags().Changed("to-seq") {
		return errors.New("--to-seq 0: stream sequences start at 1; leave --to-seq out to go to the stream's end")
	}
	return nil
}
