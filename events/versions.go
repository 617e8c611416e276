package events

import "encoding/json"

// currentVersions lists the payload types whose current schema version is
// above 1, with the upcaster from each earlier version. Every other type
// of [Catalog] is at version 1. A stored event is never rewritten: it is
// read at its stored version and brought to the current one by these
// upcasters (pure JSON-to-JSON functions), so a ledger written by an
// earlier build reads, projects and verifies unchanged
// (replay/history_test.go).
var currentVersions = []struct {
	typ     string
	version int
	up      map[int]Upcaster
}{
	// Issue 17, provider reset times: v2 adds the optional reset and
	// long_window. A v1 failure carried neither.
	// Issue 23, transport recovery: v3 adds the optional
	// tool_batch_settled. No v1 or v2 failure was reported so.
	{"AttemptFailed", 3, map[int]Upcaster{1: upOptionalFieldsAdded, 2: upOptionalFieldsAdded}},
	// v2 adds the subscription block (blocked_*, reset, block_bounded).
	// No v1 failure set a block.
	{"ProfileFailureRecorded", 2, map[int]Upcaster{1: upOptionalFieldsAdded}},
	// v2 adds kept_blocked_*. No v1 success kept a block.
	{"ProfileSucceeded", 2, map[int]Upcaster{1: upOptionalFieldsAdded}},
	// Issue 22, rule revisions: v2 adds the optional rules. A v1 turn was
	// decided by revision 1, what an absent rules means.
	// Issue 19, numbers JavaScript cannot hold: v3 writes seed as a
	// decimal string (JSON.parse and jq round a number above 2^53).
	{"TurnStarted", 3, map[int]Upcaster{1: upOptionalFieldsAdded, 2: upUint64AsString("seed")}},
	// Issue 19: v2 writes jitter_seed as a decimal string.
	{"RetryScheduled", 2, map[int]Upcaster{1: upUint64AsString("jitter_seed")}},
}

// upOptionalFieldsAdded is the upcaster of a version that only adds
// optional fields whose absence means what the earlier version meant: the
// payload is already a valid payload of the next version, unchanged.
func upOptionalFieldsAdded(p json.RawMessage) (json.RawMessage, error) { return p, nil }

// registerCurrentVersions brings r's catalog types to their current
// versions with their upcasters.
func registerCurrentVersions(r *Registry, byType map[string]Payload) error {
	for _, v := range currentVersions {
		if err := r.Register(byType[v.typ], v.version); err != nil {
			return err
		}
		for from, up := range v.up {
			if err := r.RegisterUpcaster(v.typ, from, up); err != nil {
				return err
			}
		}
	}
	return nil
}
