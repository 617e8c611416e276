package main

import (
	"github.com/spf13/cobra"

	"github.com/fledger/fledger/replay"
)

// printJSON writes v to the command's output as one indented JSON object,
// as every single-result --json does (run, explain, replay, bench):
// field names are snake_case like the HTTP API's (a listing's JSON Lines
// keep OpenClaw's camelCase names instead).
func printJSON(cmd *cobra.Command, v any) error {
	return replay.WriteJSON(cmd.OutOrStdout(), v)
}
