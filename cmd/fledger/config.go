package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fledger/fledger/commands/config"
	"github.com/spf13/cobra"
)

func init() { register(newConfigCmd) }

func newConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check failover config files and record the one in force",
	}
	cmd.AddCommand(newConfigCheckCmd(), newConfigApplyCmd(g))
	return cmd
}

// configCheckJSON is `config check --json` of a valid file: its hash and
// counts.
type configCheckJSON struct {
	File  string `json:"file"`
	Valid bool   `json:"valid"`
	Hash  string `json:"hash"`
	// Profiles and AgentEntries count auth profiles and agents entries.
	Profiles     int           `json:"profiles"`
	AgentEntries int           `json:"agent_entries"`
	Warnings     []problemJSON `json:"warnings"`
	Notes        []string      `json:"notes"`
	// Canonical is the effective config (--canonical).
	Canonical json.RawMessage `json:"canonical,omitempty"`
}

// configInvalidJSON is `config check --json` and `config apply --json`
// of an invalid or unreadable file (exit status 1): every problem; one
// with path "" is about the file as a whole (it cannot be opened or
// parsed). Agent is config apply's.
type configInvalidJSON struct {
	Agent    string        `json:"agent,omitempty"`
	File     string        `json:"file"`
	Valid    bool          `json:"valid"`
	Problems []problemJSON `json:"problems"`
}

// problemJSON is a config problem or warning in --json output (path ""
// for the file as a whole).
type problemJSON struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// printConfigInvalid prints why config.LoadFile refused file (err) as
// configInvalidJSON and returns exit status 1.
func printConfigInvalid(cmd *cobra.Command, agent, file string, err error) error {
	res := configInvalidJSON{Agent: agent, File: file}
	var ve *config.ValidationError
	if errors.As(err, &ve) {
		res.Problems = problemsJSON(ve.Problems)
	} else {
		res.Problems = []problemJSON{{Message: strings.TrimPrefix(err.Error(), "config: ")}}
	}
	if err := printJSON(cmd, res); err != nil {
		return err
	}
	return &exitError{code: 1}
}

func problemsJSON(ps []config.Problem) []problemJSON {
	out := []problemJSON{}
	for _, p := range ps {
		out = append(out, problemJSON{Path: p.Path, Message: p.Msg})
	}
	return out
}

func newConfigCheckCmd() *cobra.Command {
	var showCanonical, allowUnknown, asJSON bool
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "Validate a config file and print its hash",
		Long: `Validate a failover config file (JSON or YAML, OpenClaw key names).

Every problem is printed with its path, e.g.
  agents.defaults.model.fallbacks[2]: "gpt" is not provider/model
  agents.defaults.model.fallbaks: unknown key; did you mean "fallbacks"?
  auth.cooldowns.ladderMs[0]: 9223372036854775807 is longer than the limit of 31622400000 ms (366 days)
Unknown keys are errors; --allow-unknown-keys keeps them as warnings (the
key is ignored), for a file written for a newer release. On success the
canonical hash that names the config in events is printed; --canonical
prints the effective config with every default made explicit.

--json prints one object: {"file", "valid", "hash", "profiles",
"agent_entries", "warnings", "notes"} ("canonical" with --canonical), or
for an invalid or unreadable file {"file", "valid": false, "problems":
[{"path", "message"}]} (path "" when the file cannot be read or parsed).

Exit status: 0 valid, 1 invalid or unreadable.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := config.LoadFile(args[0], loadOptions(allowUnknown)...)
			if asJSON && err != nil {
				return printConfigInvalid(cmd, "", args[0], err)
			}
			if err != nil {
				return err
			}
			if asJSON {
				res := configCheckJSON{File: args[0], Valid: true, Hash: l.Hash, Profiles: len(l.Policy.Profiles),
					AgentEntries: len(l.Policy.Agents), Warnings: problemsJSON(l.Warnings)}
				res.Notes = configNotes(l)
				if showCanonical {
					res.Canonical = l.Canonical
				}
				return printJSON(cmd, res)
			}
			for _, w := range l.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %s\n", args[0], w)
			}
			out := cmd.OutOrStdout()
			if showCanonical {
				var buf bytes.Buffer
				if err := json.Indent(&buf, l.Canonical, "", "  "); err != nil {
					return err
				}
				buf.WriteByte('\n')
				_, err := out.Write(buf.Bytes())
				return err
			}
			for _, n := range configNotes(l) {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s %s\n", args[0], n)
			}
			fmt.Fprintf(out, "%s: valid, %s, %s, hash %s\n", args[0], plural(len(l.Policy.Profiles), "profile"), plural(len(l.Policy.Agents), "agent entry", "agent entries"), l.Hash)
			return nil
		},
	}
	cmd.Flags().BoolVar(&showCanonical, "canonical", false, "print the effective config (all defaults explicit) as JSON")
	cmd.Flags().BoolVar(&allowUnknown, "allow-unknown-keys", false, "keep unknown keys as warnings instead of errors (a file written for a newer release)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (also for an invalid file)")
	return cmd
}

// noPrimaryNote is the note on a config without a primary model
// (config check, config apply --allow-no-primary, serve --config).
const noPrimaryNote = "sets no agents.defaults.model.primary: a turn that names no model cannot start"

// configNotes are the notes on a valid config l (never nil): what it
// leaves undone that an operator would not expect of it.
func configNotes(l *config.Loaded) []string {
	notes := []string{}
	if l.Policy.Defaults.Primary.Model == "" {
		notes = append(notes, noPrimaryNote)
	}
	return notes
}

// loadOptions are the config.LoadFile options of `config check` and
// `config apply`.
func loadOptions(allowUnknown bool) []config.Option {
	if allowUnknown {
		return []config.Option{config.AllowUnknownKeys()}
	}
	return nil
}

// plural renders "1 profile", "2 profiles" (forms[1] overrides the plural).
func plural(n int, forms ...string) string {
	one, many := forms[0], forms[0]+"s"
	if len(forms) > 1 {
		many = forms[1]
	}
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
