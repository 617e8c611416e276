package projections

// projectionMeta is the projection_meta table: the schema version and the
// ledger fingerprint the database is bound to ([DB.Bind]), as key/value
// pairs. It is not part of the dump.
var projectionMeta = register(&table{
	name: "projection_meta", order: 0, key: 1, withoutRowID: true, internal: true,
	columns: []column{text("key"), text("value")},
})

// checkpointTable is the checkpoint table: its single row is the last
// stream sequence folded and how many commits and events were, written
// by every flush in the transaction of the rows it covers.
var checkpointTable = register(&table{
	name: "checkpoint", order: 10, key: 1,
	columns: []column{
		{name: "id", typ: "INTEGER", check: "id = 1"},
		integer("seq"), integer("commits"), integer("events"),
	},
	seed: "INSERT INTO checkpoint (id, seq, commits, events) VALUES (1, 0, 0, 0)",
})
