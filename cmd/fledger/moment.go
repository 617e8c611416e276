package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"
)

// momentRule is the one rule for time and sequence flags, written once
// and appended to the help of every command that has such a flag (and
// stated in the README's "Commands" section).
const momentRule = `Times and sequences: a flag named with a moment word (--since, --until,
--at, --now) is always a time, RFC 3339 (2026-03-02T09:05:00Z, "t" and "z"
also in lower case; --since
also takes a duration before now, e.g. 2h); a stream sequence is always
--from-seq N / --to-seq N, both inclusive. A bare number given to a time
flag is refused, naming the sequence flag (or, where this command takes
none, the command that does).`

// withMomentRule appends momentRule to cmd's long help.
func withMomentRule(cmd *cobra.Command) *cobra.Command {
	cmd.Long += "\n\n" + momentRule
	return cmd
}

// moment is how one time flag reads its value.
type moment struct {
	// flag is the flag's name with its dashes ("--since").
	flag string
	// relative: a Go duration is also accepted, meaning that long before
	// now ("15m", "2h").
	relative bool
	// seq is what to use for a stream sequence instead (e.g.
	// "--from-seq", or "fledger events --from-seq" when the command has
	// none): a bare integer is refused with "a stream sequence is <seq>
	// N". "" when nothing selects by sequence there.
	seq string
}

// The --since flags: a time or a duration before now. Export and
// decisions also take --from-seq (export's --since was a sequence before);
// turns are not selected by sequence.
var (
	sinceMoment      = moment{flag: "--since", relative: true, seq: "--from-seq"}
	turnsSinceMoment = moment{flag: "--since", relative: true, seq: "fledger events --from-seq"}
)

// parse reads s ("" = the zero time): an RFC 3339 time ("t" and "z" in
// either case), or with relative
// a duration before now (not negative). Every refusal reads
// "FLAG VALUE: not a time; …": a bare integer is a stream sequence given
// where a time is meant, and the rest names m.seq (or, when m.seq is
// another command's, says this one takes none); anything else says what
// m wants.
func (m moment) parse(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if _, err := strconv.ParseUint(s, 10, 64); err == nil && m.seq != "" {
		if strings.HasPrefix(m.seq, "fledger ") {
			return time.Time{}, fmt.Errorf("%s %s: not a time; this command takes no stream sequence, %s %s does", m.flag, s, m.seq, s)
		}
		return time.Time{}, fmt.Errorf("%s %s: not a time; a stream sequence is %s %s", m.flag, s, m.seq, s)
	}
	if m.relative {
		if d, err := time.ParseDuration(s); err == nil && d >= 0 {
			return now.Add(-d), nil
		}
	}
	// RFC 3339 (§5.6) allows "t" and "z" in lower case, and the HTTP API
	// takes them; Go's layout does not.
	if t, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s)); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s %s: not a time; %s", m.flag, shellWord(s), m.want())
}

// want says what m accepts.
func (m moment) want() string {
	if m.relative {
		return "want an RFC 3339 time (2026-01-06T10:40:00Z) or a duration before now (15m)"
	}
	return "want an RFC 3339 time, e.g. 2026-01-06T10:40:00Z"
}

// shellWord is s as typed, quoted only when it holds a space, a quote or
// a control character.
func shellWord(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '"' || r == '\'' || !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// shellArg is s as one POSIX shell word: as it is when it holds only
// characters no shell treats specially, else in single quotes (a single
// quote inside written '\”).
func shellArg(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,:/@+=%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// deprecatedAlias registers old as a hidden, deprecated spelling of the
// flag name on the same variable: cobra accepts it for one more release
// and prints "Flag --old has been deprecated, use --name instead".
func deprecatedAlias(cmd *cobra.Command, old, name string) {
	f := cmd.Flags()
	nf := f.Lookup(name)
	f.Var(nf.Value, old, "deprecated: use --"+name)
	_ = f.MarkDeprecated(old, "use --"+name+" instead")
	// Both spellings at once would silently keep the last one given.
	cmd.MarkFlagsMutuallyExclusive(old, name)
}
