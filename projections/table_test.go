package projections

import (
	"slices"
	"testing"
)

// TestTables_RowsMatchTheirColumns checks each row type's values and
// scan destinations against its table's columns, in number (the order is
// the exact-rows and dump tests').
func TestTables_RowsMatchTheirColumns(t *testing.T) {
	for _, tc := range []struct {
		t      *table
		values []any
		dest   []any
	}{
		{usageStats, (&profileRow{}).values(nil), (&profileRow{}).dest()},
		{sessionSelection, (&sessionRow{}).values(nil), (&sessionRow{}).dest()},
		{turns, (&turnRow{}).values(nil), (&turnRow{}).dest()},
		{fallbackDecisions, (&decisionRow{}).values(nil), nil},
		{quarantined, (&quarantineRow{}).values(nil), nil},
	} {
		t.Run(tc.t.name, func(t *testing.T) {
			if len(tc.values) != len(tc.t.columns) {
				t.Errorf("values has %d, the table %d columns", len(tc.values), len(tc.t.columns))
			}
			if tc.t.rows.loads && len(tc.dest) != len(tc.t.columns)-tc.t.key {
				t.Errorf("dest has %d, the table %d non-key columns", len(tc.dest), len(tc.t.columns)-tc.t.key)
			}
		})
	}
}

func TestTables_NamesAndOrdersAreUnique(t *testing.T) {
	names := map[string]bool{}
	for i, tb := range tables {
		if names[tb.name] {
			t.Errorf("table %s registered twice", tb.name)
		}
		names[tb.name] = true
		if i > 0 && tables[i-1].order >= tb.order {
			t.Errorf("%s and %s share order %d: the schema and dump order would depend on the file order", tables[i-1].name, tb.name, tb.order)
		}
		if tb.key < 1 || tb.key > len(tb.columns) {
			t.Errorf("%s: key %d of %d columns", tb.name, tb.key, len(tb.columns))
		}
	}
}

// A table's deletes are types it folds, and only a keyed table (whose
// rows the flush deletes by their (agent, envelope key)) has any.
func TestTables_DeletesAreFoldedByAKeyedTable(t *testing.T) {
	var with []string
	for _, tb := range tables {
		if len(tb.deletes) == 0 {
			continue
		}
		with = append(with, tb.name)
		if !tb.rows.loads || tb.key != 2 {
			t.Errorf("%s deletes rows but is not a keyed table", tb.name)
		}
		for _, p := range tb.deletes {
			if !slices.Contains(eventTables[p.EventType()], slices.Index(tables, tb)) {
				t.Errorf("%s deletes a row on %s, which it does not fold", tb.name, p.EventType())
			}
		}
	}
	if want := []string{"session_selection"}; !slices.Equal(with, want) {
		t.Errorf("tables deleting rows %q, want %q", with, want)
	}
}

// TestTables_StatementsAreDerivedFromTheColumns pins the statements the
// projector prepares for one table of each kind.
func TestTables_StatementsAreDerivedFromTheColumns(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"skipped_events put", skippedEvents.putSQL(),
			"INSERT INTO skipped_events (type, count, firstSeq, lastSeq) VALUES (?, ?, ?, ?) ON CONFLICT (type) DO UPDATE SET count = count + excluded.count, lastSeq = excluded.lastSeq"},
		{"quarantined put", quarantined.putSQL(),
			"INSERT INTO quarantined (seq, lastSeq, kind, subject, size, reason) VALUES (?, ?, ?, ?, ?, ?)"},
		{"session_selection put", sessionSelection.putSQL(),
			"INSERT INTO session_selection (" + sessionSelection.list + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent, sessionKey) DO UPDATE SET " +
				"providerOverride = excluded.providerOverride, modelOverride = excluded.modelOverride, modelOverrideSource = excluded.modelOverrideSource, " +
				"autoOriginProvider = excluded.autoOriginProvider, autoOriginModel = excluded.autoOriginModel, fallbacksOverride = excluded.fallbacksOverride, " +
				"hasFallbacksOverride = excluded.hasFallbacksOverride, authProfileOverride = excluded.authProfileOverride, " +
				"authProfileOverrideProvider = excluded.authProfileOverrideProvider, authProfileOverrideSource = excluded.authProfileOverrideSource, " +
				"fallbackNoticeSelectedModel = excluded.fallbackNoticeSelectedModel, fallbackNoticeActiveModel = excluded.fallbackNoticeActiveModel, " +
				"fallbackNoticeReason = excluded.fallbackNoticeReason, compactionCount = excluded.compactionCount, lastReset = excluded.lastReset, " +
				"lastResetAt = excluded.lastResetAt, updatedAt = excluded.updatedAt, lastSeq = excluded.lastSeq"},
		{"session_selection delete", sessionSelection.delSQL,
			"DELETE FROM session_selection WHERE agent = ? AND sessionKey = ?"},
		{"turns get", turns.getSQL(),
			"SELECT sessionId, chat, requestedProvider, requestedModel, selectionSource, strict, configHash, answeredProvider, answeredModel, " +
				"answeredProfileId, attempts, outcome, reason, disposition, startedAt, endedAt, durationMs, lastSeq, startSeq, openedAt, class FROM turns WHERE agent = ? AND turnId = ?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Fatalf("\n got %s\nwant %s", tc.got, tc.want)
			}
		})
	}
}
