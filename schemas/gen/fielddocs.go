package main

// commonDocs describes fields that carry no doc comment in events/, by JSON
// name. A doc comment on the field always wins.
var commonDocs = map[string]string{
	"profile_id":           "Auth profile id, `<provider>:<name>`, e.g. `openai:user@example.com`.",
	"provider":             "Provider id, e.g. `openai`.",
	"model":                "Model id within the provider, e.g. `gpt-5`.",
	"turn_id":              "Turn id: the turn aggregate's key and the events' correlation id.",
	"turnId":               "Turn id: the turn aggregate's key.",
	"session":              "Session key: the session aggregate's key.",
	"sessionId":            "Session key.",
	"attempt":              "1-based attempt number within the turn.",
	"attempts":             "Number of attempts made in the turn.",
	"failure_counts":       "Failures per reason in the current failure window (reason → count).",
	"last_failure_at":      "Time of this failure (usageStats lastFailureAt).",
	"cooldown_until":       "End of the cooldown window (0 = none).",
	"cooldown_reason":      "Reason that opened the cooldown window.",
	"cooldown_model":       "Model the cooldown is scoped to (\"\" = all models of the profile).",
	"disabled_until":       "End of the disable window (0 = none).",
	"disabled_reason":      "Reason that disabled the profile (billing, auth_permanent).",
	"pin_source":           "Source of the session's auth pin at start: auto | user.",
	"status":               "HTTP status.",
	"code":                 "Provider error code, e.g. `rate_limit_exceeded`.",
	"type":                 "Provider error type.",
	"name":                 "Provider SDK error name.",
	"rule":                 "Id of the classifier rule that decided.",
	"source":               "Where the evidence was found (status, code, message, body, …).",
	"field":                "The error field the rule matched.",
	"match":                "The matched text (redacted).",
	"error":                "The redacted error text.",
	"duration_ms":          "Turn duration from TurnStarted.started_at.",
	"answered_by":          "The provider/model that answered.",
	"previous":             "The value before the change.",
	"selected":             "The session's selected model, `provider/model`.",
	"active":               "The model actually answering, `provider/model` (\"\" = fallback no longer active).",
	"reason":               "Failover reason.",
	"text":                 "The notice text as shown to the user.",
	"budget":               "Same-model retry budget for this candidate.",
	"delay_ms":             "Delay before the next call.",
	"round":                "Whole-chain overload retry round (1-based).",
	"waited_ms":            "Total already waited in earlier rounds.",
	"message":              "Human-readable message.",
	"kept_cooldown_reason": "Reason of the kept cooldown.",
	"kept_cooldown_model":  "Model the kept cooldown is scoped to.",
	"kept_error_count":     "errorCount that survives with the kept cooldown.",
	"compaction_count":     "The session's compaction count after this compaction.",
	"requested":            "The model the turn asked for (provider/model).",
	"chain":                "The candidate chain the turn will walk, in order, with route origins.",
	"disposition":          "What the failover loop may do: failover | compaction | abort | refusal | coordination (POLICY \"Reasons, status, disposition\").",
	"evidence":             "Which classifier rule decided and what it matched.",
	"latency_ms":           "How long the provider call took.",
	"retry_after_ms":       "The provider's retry-after hint (0/absent = none).",
	"candidate_index":      "0-based position in TurnStarted.chain.",
	"delivered":            "False when the notice was suppressed (group or channel chat) but recorded.",
	"summary":              "The exhaustion summary, exactly `All models failed (N): p/m: err (reason) | …`.",
}

// perTypeDocs override commonDocs for one type's field ("Type.json_name").
var perTypeDocs = map[string]string{
	"ProviderErrorRecord.status": "The provider's HTTP status (0/absent when none).",
	"ProviderErrorRecord.type":   "Provider error type, e.g. `requests`, `overloaded_error`.",
	"ExhaustedAttempt.error":     "The attempt's redacted error text, as in the summary.",
	"PreviousAttempt.reason":     "Failover reason of the earlier attempt.",
	"SessionModelCleared.cause":  "Why the selection was cleared: `/model default`, auto override recovered, or /new and /reset.",
	"SessionAuthUnpinned.cause":  "Why the pin was cleared.",
	"SessionReset.kind":          "`new` for /new, `reset` for /reset.",
	"AttemptStarted.kind":        "Why this call is made: first call, same-model retry, profile rotation, model fallback, cooldown probe, whole-chain retry, a jump to the candidate a live user switch selected (live_switch), the bounded same-model continuation after a transport failure (transport_recovery).",
	"CandidateSkipped.decision":  "`skip` the candidate, or `suspend` the turn until the soonest expiry.",
	"NoticeSent.kind":            "Which notice: fallback engaged, fallback cleared, or waiting on overload.",
	"TurnStopped.disposition":    "Why the turn stopped (POLICY dispositions; failover with reason unknown for a final unknown error).",
}

// fieldDoc returns the description of a field.
func fieldDoc(d docs, typeName, goField, jsonName string) string {
	if s := d[typeName+"."+goField]; s != "" {
		return s
	}
	if s := perTypeDocs[typeName+"."+jsonName]; s != "" {
		return s
	}
	if typeName == "FallbackStepped" || typeName == "PreviousAttempt" {
		if s := commonDocs[jsonName]; s != "" {
			return s + " (model_fallback_decision `" + jsonName + "`, reference §8)"
		}
		return "model_fallback_decision field `" + jsonName + "` (reference §8)."
	}
	return commonDocs[jsonName]
}
