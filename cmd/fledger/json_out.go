package main

import (
	"encoding/json"
	"io"

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

// errorJSON is what a command given --json prints when it fails (exit
// status 1): one object on one line, on stdout like its result, so a
// listing's JSON Lines end with it and a single result is replaced by it.
type errorJSON struct {
	Error string `json:"error"`
}

// writeJSONError writes msg as an errorJSON line.
func writeJSONError(w io.Writer, msg string) error {
	b, err := json.Marshal(errorJSON{Error: msg})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// wantsJSON says cmd was given --json (as far as its flags were read).
func wantsJSON(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("json")
	return f != nil && f.Value.String() == "true"
}
