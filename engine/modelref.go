package engine

import (
	"fmt"
	"strings"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/events"
)

// ParseModelRef parses "provider/model". The provider is everything before
// the first '/', the model everything after it (it may hold more '/' and
// '@', e.g. "openrouter/meta/llama@free"); both must be non-empty, and
// the whole at most [MaxModelRefLen] bytes. Errors wrap [ErrBadRequest].
func ParseModelRef(s string) (events.ModelRef, error) {
	if len(s) > MaxModelRefLen {
		return events.ModelRef{}, fmt.Errorf("%w: model is %d bytes, longer than the %d bytes a provider/model may have", ErrBadRequest, len(s), MaxModelRefLen)
	}
	p, m, ok := strings.Cut(s, "/")
	if !ok || p == "" || m == "" {
		return events.ModelRef{}, fmt.Errorf("%w: model %q is not provider/model", ErrBadRequest, s)
	}
	if err := checkRefText("model", s); err != nil {
		return events.ModelRef{}, err
	}
	return events.ModelRef{Provider: p, Model: m}, nil
}

// ModelRefProblem says why s, a "provider/model", cannot name one model
// ("" = it can), in the config's words ([config.IDTextProblem]): a
// wildcard ("*/>" would be a pattern, not a model), white space ("
// openai/gpt-5" would be a provider " openai" that no auth profile
// belongs to: a call with default credentials, past every profile's
// cooldown) or a control character in its provider or its model. HTTP,
// the micro service, the CLI and scenarios refuse what a config refuses.
func ModelRefProblem(s string) string {
	prov, model, _ := strings.Cut(s, "/")
	if p := config.IDTextProblem("provider", prov); p != "" {
		return p
	}
	return config.IDTextProblem("model", model)
}

// checkRefText refuses a provider/model [ModelRefProblem] names, as an
// [ErrBadRequest] naming field.
func checkRefText(field, s string) error {
	if p := ModelRefProblem(s); p != "" {
		return fmt.Errorf("%w: %s %q: %s", ErrBadRequest, field, s, p)
	}
	return nil
}

// ParseModelSelection parses the argument of `/model provider/model[@profile]`:
// the model and the auth profile to pin ("" = none). It is the one parser
// of that syntax (the scenario runner and `fledger serve` use it).
//
// An '@' ends the model only where a profile id as OpenClaw writes them
// starts: "<provider>:<name>" (provider:default, provider:<email>; seed 000
// "Profile IDs"), the split [config.ProfileSuffixAt] finds (a config file
// refuses a model it would split). The profile id is everything after it
// (so an e-mail profile keeps its '@'). Any other '@' is part of the
// model, as in Vertex's versioned ids and Cloudflare's @cf/ models:
//
//	openai/gpt-5@openai:backup                      → openai/gpt-5, openai:backup
//	openai-codex/gpt-5@openai-codex:me@x.io         → openai-codex/gpt-5, openai-codex:me@x.io
//	vertex/claude-3-5-sonnet@20240620               → vertex/claude-3-5-sonnet@20240620, no pin
//	vertex/claude-3-5-sonnet@20240620@vertex:work   → vertex/claude-3-5-sonnet@20240620, vertex:work
//	cloudflare/@cf/meta/llama-3-8b-instruct         → cloudflare/@cf/meta/llama-3-8b-instruct, no pin
//
// A profile whose id is not provider:name is pinned with a request's
// profile field instead. A trailing '@' (a profile left out) is refused,
// as the config refuses a model that ends in one.
//
// Errors wrap [ErrBadRequest]: a model that is not provider/model, is too
// long ([MaxModelRefLen]) or holds what no model id may
// ([ModelRefProblem]), or a trailing '@'.
func ParseModelSelection(s string) (events.ModelRef, string, error) {
	if max := MaxModelRefLen + 1 + events.MaxKeyLen; len(s) > max {
		return events.ModelRef{}, "", fmt.Errorf("%w: model is %d bytes, longer than the %d bytes provider/model@profile may have", ErrBadRequest, len(s), max)
	}
	model, profile := s, ""
	if at := config.ProfileSuffixAt(s); at >= 0 {
		model, profile = s[:at], s[at+1:]
	}
	ref, err := ParseModelRef(model)
	if err != nil {
		if len(model) > MaxModelRefLen || ModelRefProblem(model) != "" {
			return events.ModelRef{}, "", err
		}
		return events.ModelRef{}, "", fmt.Errorf("%w: model %q is not provider/model[@profile]", ErrBadRequest, s)
	}
	if strings.HasSuffix(model, "@") {
		return events.ModelRef{}, "", fmt.Errorf("%w: model %q ends in @ with no profile after it (a profile is provider:name)", ErrBadRequest, s)
	}
	return ref, profile, nil
}
