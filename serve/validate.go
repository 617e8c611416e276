package serve

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// modelSelection parses a request's `/model` argument
// "provider/model[@profile]" with the engine's parser; field names the
// request field in the error (400).
func modelSelection(s, field string) (events.ModelRef, string, error) {
	ref, prof, err := engine.ParseModelSelection(s)
	if err != nil {
		return ref, "", badModel(s, field, "provider/model[@profile]")
	}
	return ref, prof, nil
}

// badModel is the 400 for a model s named field that did not parse as
// shape ("provider/model" or "provider/model[@profile]").
func badModel(s, field, shape string) error {
	switch {
	case len(s) > engine.MaxModelRefLen:
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s is %d bytes, longer than the %d bytes a provider/model may have", field, len(s), engine.MaxModelRefLen)
	case s == "":
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s is empty (or null): want %s", field, shape)
	}
	if p := engine.ModelRefProblem(s); p != "" && strings.Contains(s, "/") {
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %q: %s", field, s, p)
	}
	if strings.HasSuffix(s, "@") && strings.Contains(s, "/") {
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %q ends in @ with no profile after it (a profile is provider:name)", field, s)
	}
	return apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %q is not %s", field, s, shape)
}

// maxFallbacks bounds a begin's fallbacks or fallbacks_override list: a
// chain is a handful of models, and the turn's TurnStarted must fit a
// commit.
const maxFallbacks = 64

// cronPayload is the cron payload of a begin with source cron: model, and
// payload.fallbacks when given (each provider/model, no @profile; [] =
// strict).
func cronPayload(model events.ModelRef, fallbacks *[]string) (*policy.CronPayload, error) {
	p := &policy.CronPayload{Model: model}
	if fallbacks == nil {
		return p, nil
	}
	p.HasFallbacks = true
	if n := len(*fallbacks); n > maxFallbacks {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "fallbacks has %d entries; at most %d", n, maxFallbacks)
	}
	for i, f := range *fallbacks {
		ref, prof, err := engine.ParseModelSelection(f)
		if err != nil {
			return nil, badModel(f, fmt.Sprintf("fallbacks[%d]", i), "provider/model")
		}
		if prof != "" {
			return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "fallbacks[%d] %q: a cron fallback takes no @profile", i, f)
		}
		p.Fallbacks = append(p.Fallbacks, ref)
	}
	return p, nil
}

// modelList parses a list of provider/model (no @profile) named field; nil
// stays nil (absent), an empty list is kept empty.
func modelList(field string, list *[]string) (*[]policy.ModelRef, error) {
	if list == nil {
		return nil, nil
	}
	if n := len(*list); n > maxFallbacks {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s has %d entries; at most %d", field, n, maxFallbacks)
	}
	out := []policy.ModelRef{}
	for i, f := range *list {
		ref, prof, err := engine.ParseModelSelection(f)
		if err != nil {
			return nil, badModel(f, fmt.Sprintf("%s[%d]", field, i), "provider/model")
		}
		if prof != "" {
			return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s[%d] %q takes no @profile", field, i, f)
		}
		out = append(out, ref)
	}
	return &out, nil
}

// checkKey refuses an id that could never be stored as an aggregate key
// (400 naming the field and the limit) before anything is recorded, and
// the ids "." and "..": a URL path segment of either is a dot segment that
// fetch, curl and browsers remove, so such a turn or session could never
// be addressed by its path.
func checkKey(field string, agg events.Aggregate, key string) error {
	if key == "." || key == ".." {
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %q is a dot segment, which a URL path cannot hold: choose another id", field, key)
	}
	// As any build stored it: the engine holds a new id to the rule of
	// new ids (engine.ValidateKey), so a turn or session stored before
	// that rule can still be read and continued.
	if err := engine.ValidateStoredKey(agg, key); err != nil {
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %v", field, err)
	}
	return nil
}
