package serve

import (
	"fmt"
	"net/http"

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
		if len(s) > engine.MaxModelRefLen {
			return ref, "", apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s is %d bytes, longer than the %d bytes a provider/model may have", field, len(s), engine.MaxModelRefLen)
		}
		return ref, "", apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %q is not provider/model[@profile]", field, s)
	}
	return ref, prof, nil
}

// cronPayload is the cron payload of a begin with source cron: model, and
// payload.fallbacks when given (each provider/model, no @profile; [] =
// strict).
func cronPayload(model events.ModelRef, fallbacks *[]string) (*policy.CronPayload, error) {
	p := &policy.CronPayload{Model: model}
	if fallbacks == nil {
		return p, nil
	}
	p.HasFallbacks = true
	for i, f := range *fallbacks {
		ref, prof, err := modelSelection(f, fmt.Sprintf("fallbacks[%d]", i))
		if err != nil {
			return nil, err
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
	out := []policy.ModelRef{}
	for i, f := range *list {
		ref, prof, err := modelSelection(f, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		if prof != "" {
			return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s[%d] %q takes no @profile", field, i, f)
		}
		out = append(out, ref)
	}
	return &out, nil
}

// checkKey refuses an id that could never be stored as an aggregate key
// (400 naming the field and the limit) before anything is recorded.
func checkKey(field string, agg events.Aggregate, key string) error {
	if err := engine.ValidateKey(agg, key); err != nil {
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %v", field, err)
	}
	return nil
}
