package config

import (
	"errors"
	"strings"
)

// ErrInvalid is wrapped by every validation failure: errors.Is(err,
// config.ErrInvalid) tells a bad config from an unreadable file.
var ErrInvalid = errors.New("invalid config")

// Problem is one finding at a path in the file, written the way a user
// would address the key: `agents.defaults.model.fallbacks[2]`,
// `auth.profiles["openai:me@example.com"].type`.
type Problem struct {
	Path string
	Msg  string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Msg
	}
	return p.Path + ": " + p.Msg
}

// ValidationError lists every problem found in one config file; it wraps
// [ErrInvalid].
type ValidationError struct {
	// Source names the file (or "-" for stdin).
	Source   string
	Problems []Problem
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	b.WriteString(": invalid config")
	if len(e.Problems) == 1 {
		b.WriteString(": ")
		b.WriteString(e.Problems[0].String())
		return b.String()
	}
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

func (e *ValidationError) Unwrap() error { return ErrInvalid }
