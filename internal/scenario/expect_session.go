package scenario

// checkSession compares a session's state with its expectation; prefix
// names it in the field ("session" after a turn, "session <key>" at the
// end of the run).
func checkSession(where, prefix string, want SessionExpect, got SessionReport, miss missFunc) {
	for _, f := range []struct {
		name string
		want *string
		got  string
	}{{"model", want.Model, got.Model}, {"source", want.Source, got.Source}, {"origin", want.Origin, got.Origin},
		{"pin", want.Pin, got.Pin}, {"pin_source", want.PinSource, got.PinSource},
		{"notice_selected", want.NoticeSelected, got.NoticeSelected}, {"notice_active", want.NoticeActive, got.NoticeActive},
		{"notice_reason", want.NoticeReason, got.NoticeReason}} {
		if f.want != nil && absent(*f.want) != f.got {
			miss(where, prefix+" "+f.name, quote(absent(*f.want)), quote(f.got))
		}
	}
}
