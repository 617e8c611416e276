package events

import "fmt"

// commitBody checks req's subject and events and encodes its commit body
// with the store's registry, limits and validator: what both stores
// ([Open]'s and [OpenMemory]'s) store as one message, refused before
// anything is written with ErrInvalidSubject, ErrEmptyCommit or an
// *[EventError] (ErrTooLarge over the event-count or byte limit;
// ErrInvalidEnvelope for an event of another agent than the subject's,
// which no reader would fold alike).
func commitBody(cfg *config, reg *Registry, req AppendRequest) ([]byte, []Envelope, error) {
	agent, _, _, err := ParseSubject(req.Subject)
	if err != nil {
		return nil, nil, err
	}
	if len(req.Events) > cfg.maxEvents {
		return nil, nil, &EventError{Index: -1, Err: ErrTooLarge,
			Reason: fmt.Sprintf("commit has %d events, the limit is %d", len(req.Events), cfg.maxEvents)}
	}
	envs, err := reg.encodeEnvelopes(req.Events)
	if err != nil {
		return nil, nil, err
	}
	for i := range envs {
		if envs[i].Agent != agent {
			return nil, nil, &EventError{Index: i, Type: envs[i].Type, Field: "agent", Err: ErrInvalidEnvelope,
				Reason: fmt.Sprintf("agent %q, stored under agent %q's subject %s", envs[i].Agent, agent, req.Subject)}
		}
	}
	if v := cfg.validator; v != nil {
		for i := range envs {
			if err := v.ValidatePayload(envs[i].Type, envs[i].SchemaVersion, envs[i].Payload); err != nil {
				return nil, nil, schemaError(i, envs[i].Type, err)
			}
		}
	}
	body, err := marshalCommit(envs, req.Basis)
	if err != nil {
		return nil, nil, err
	}
	if len(body) > cfg.maxCommitBytes {
		return nil, nil, tooLarge(envs, len(body), cfg.maxCommitBytes)
	}
	return body, envs, nil
}

// guarded is req with its Guard defaulted to its Subject, or an error
// wrapping ErrInvalidSubject for a guard that is no fledger subject or
// filter.
func guarded(req AppendRequest) (AppendRequest, error) {
	if req.Guard == "" {
		req.Guard = req.Subject
		return req, nil
	}
	return req, checkFilter(req.Guard)
}
