package scenario

import (
	"sort"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
)

// SessionReport is a session's state with the HTTP API's session view
// names ("" = absent): the stored selection (model override, source,
// auto origin), the auth-profile pin and the fallback-notice state.
type SessionReport struct {
	Session        string `json:"session"`
	Model          string `json:"model,omitempty"`
	Source         string `json:"source,omitempty"`
	Origin         string `json:"origin,omitempty"`
	Pin            string `json:"pin,omitempty"`
	PinSource      string `json:"pin_source,omitempty"`
	NoticeSelected string `json:"notice_selected,omitempty"`
	NoticeActive   string `json:"notice_active,omitempty"`
	NoticeReason   string `json:"notice_reason,omitempty"`
}

func sessionReport(key string, s policy.SessionState) SessionReport {
	return SessionReport{Session: key, Model: s.Model.String(), Source: string(s.Source), Origin: s.Origin.String(),
		Pin: s.Pin, PinSource: string(s.PinSource),
		NoticeSelected: s.Notice.Selected, NoticeActive: s.Notice.Active, NoticeReason: s.Notice.Reason}
}

// sessionReports returns the state of every session the script names (its
// turns, its commands, its end-of-run expectations), sorted by key.
func sessionReports(eng *engine.Engine, sc *Scenario) []SessionReport {
	keys := map[string]bool{}
	for _, st := range sc.Script {
		switch {
		case st.Turn != nil:
			keys[st.Turn.Session] = true
		case st.Command != nil && st.Command.Session != "":
			keys[st.Command.Session] = true
		}
	}
	if sc.Expect != nil {
		for k := range sc.Expect.Sessions {
			keys[k] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	out := make([]SessionReport, 0, len(sorted))
	for _, k := range sorted {
		out = append(out, sessionReport(k, eng.Session(k)))
	}
	return out
}
