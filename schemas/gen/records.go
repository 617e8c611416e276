package main

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/fledger/fledger/events"
)

// The schemas of the stored forms and of the decision record, written to
// schemas/ beside the event schemas: envelope.v1.json (one stored event,
// its payload checked against schemas/events/<type>.v<schema_version>.json
// for every file there), commit.v1.json (one stream message) and
// decision-record.v1.json (projections.DecisionRecord: the record of GET
// /v1/decisions, `fledger decisions --json` and the JSONL export).
const (
	envelopeFile = "envelope.v1.json"
	commitFile   = "commit.v1.json"
	decisionFile = "decision-record.v1.json"
)

const draft = "https://json-schema.org/draft/2020-12/schema"

// storedSchemas returns the top-level schema files by name. eventFiles are
// the names of every event schema file ("<Type>.v<N>.json"), superseded
// versions included.
func storedSchemas(d docs, eventFiles []string) (map[string]*schema, error) {
	b := &builder{d: d, defs: map[string]*schema{}, fields: map[string][]field{}}
	env, err := b.structSchema(reflect.TypeOf(events.Envelope{}))
	if err != nil {
		return nil, err
	}
	env.Schema, env.ID, env.Title = draft, schemaBase+envelopeFile, "Envelope v1"
	env.Description = d["Envelope"]
	for _, p := range *env.Properties {
		if p.name == "key" && p.s.Description == "" {
			p.s.Description = "Key names the aggregate instance: a config hash, profile id, session key, turn id or provider id."
		}
	}
	sort.Strings(eventFiles)
	for _, f := range eventFiles {
		typ, v, _ := strings.Cut(strings.TrimSuffix(f, ".json"), ".v")
		version, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("event schema file %s is not <Type>.v<N>.json", f)
		}
		env.AllOf = append(env.AllOf, &schema{
			If: &schema{Properties: &props{{"type", &schema{Const: typ}}, {"schema_version", &schema{Const: version}}},
				Required: []string{"type", "schema_version"}},
			Then: &schema{Properties: &props{{"payload", &schema{Ref: "events/" + f}}}},
		})
	}

	cb := &builder{d: d, defs: map[string]*schema{}, fields: map[string][]field{}}
	commit, err := cb.structSchema(reflect.TypeOf(events.Commit{}))
	if err != nil {
		return nil, err
	}
	commit.Schema, commit.ID, commit.Title = draft, schemaBase+commitFile, "Commit v1"
	commit.Description = d["Commit"] + " One stream message's body."
	for _, p := range *commit.Properties {
		if p.name == "events" {
			one := 1
			p.s.Description = "The commit's events, in order (at least one)."
			p.s.Type, p.s.Items, p.s.MinItems = "array", &schema{Ref: envelopeFile}, &one
		}
	}

	dec, err := decisionSchema(d)
	if err != nil {
		return nil, err
	}
	return map[string]*schema{envelopeFile: env, commitFile: commit, decisionFile: dec}, nil
}

// decisionSchema is projections.DecisionRecord's schema: its own fields,
// then FallbackStepped's, flattened; previousAttempts' items inline (no
// $defs), so the OpenAPI component can be the same document.
func decisionSchema(d docs) (*schema, error) {
	b := &builder{d: d, defs: map[string]*schema{}, fields: map[string][]field{}}
	fs, err := b.structSchema(reflect.TypeOf(events.FallbackStepped{}))
	if err != nil {
		return nil, err
	}
	zero := 0
	head := props{
		{"event", &schema{Description: "Always `model_fallback_decision`: OpenClaw's log event name (reference §8).", Type: "string", Const: "model_fallback_decision"}},
		{"tags", tags(fs)},
		{"seq", &schema{Description: "JetStream stream sequence of the commit that carried the event; the records of one commit share it.", Type: "integer", Minimum: &zero}},
		{"idx", &schema{Description: "The event's index in its commit (0-based); with seq it names the record.", Type: "integer", Minimum: &zero}},
		{"time", &schema{Description: "Decision time (the event's `at`), RFC 3339 UTC with milliseconds, e.g. `2026-03-02T09:00:01.250Z`.", Type: "string", Format: "date-time"}},
		{"agent", &schema{Description: "OpenClaw agent id the decision belongs to.", Type: "string"}},
	}
	for _, p := range *fs.Properties {
		if p.s.Items != nil && strings.HasPrefix(p.s.Items.Ref, "#/$defs/") {
			p.s.Items = b.defs[strings.TrimPrefix(p.s.Items.Ref, "#/$defs/")]
		}
	}
	all := append(head, *fs.Properties...)
	req := []string{}
	for _, p := range head {
		req = append(req, p.name)
	}
	return &schema{
		Schema:               draft,
		ID:                   schemaBase + decisionFile,
		Title:                "model_fallback_decision record v1",
		Description:          "One model_fallback_decision record, the same in GET /v1/decisions (and the NATS micro decisions.list), `fledger decisions --json` and the JSONL export (`fledger export --format jsonl`); the OTLP export maps its attributes from it. OpenClaw's `event` and `tags` (reference §8), fledger's stream position (`seq`, `idx`), the decision `time`, the `agent`, then the FallbackStepped payload with OpenClaw's field names. Optional fields are absent when empty.",
		Type:                 "object",
		Properties:           &all,
		Required:             append(req, fs.Required...),
		AdditionalProperties: false,
	}, nil
}

// tags is the schema of a record's tags: ["error_handling",
// "model_fallback", <decision>], decision from fs's decision enum.
func tags(fs *schema) *schema {
	three := 3
	var decisions []string
	for _, p := range *fs.Properties {
		if p.name == "decision" {
			decisions = p.s.Enum
		}
	}
	return &schema{
		Description: "`[\"error_handling\", \"model_fallback\", <decision>]` (reference §8).",
		Type:        "array",
		PrefixItems: []*schema{{Const: "error_handling"}, {Const: "model_fallback"}, {Type: "string", Enum: decisions}},
		Items:       &schema{Type: "string"},
		MinItems:    &three,
		MaxItems:    &three,
	}
}
