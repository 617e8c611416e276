package projections

import (
	"cmp"
	"slices"
	"strings"

	"github.com/fledger/fledger/events"
)

// table is one projection table, defined once: its columns (from which
// the DDL, the statements the projector prepares, the dump and the
// queries' column lists are derived), its indexes, the event types it
// folds and the cache that folds them. Each table is declared in the file
// named after it and added to [tables] by [register].
type table struct {
	// name is the SQL table name.
	name string
	// order places the table in the schema, the drop (reversed) and the
	// dump; the tables of version 4 take 0, 10, …, 70, and a new table
	// the next ten.
	order int
	// columns are the table's columns in table order; the first key
	// columns are the primary key (the dump's row order, the upsert's
	// conflict target and the load's WHERE).
	columns []column
	key     int
	// withoutRowID makes it a WITHOUT ROWID table.
	withoutRowID bool
	// indexes are created after the table.
	indexes []index
	// seed is SQL run right after the table is created (its initial
	// rows), e.g. the checkpoint's single row.
	seed string
	// internal tables (projection_meta) are not part of the dump.
	internal bool

	// upsert and onConflict say how the projector writes a row
	// ([table.putSQL]): an INSERT, or with upsert an INSERT … ON CONFLICT
	// (key) DO UPDATE SET every other column, or an INSERT followed by
	// onConflict verbatim.
	upsert     bool
	onConflict string
	// folds are the event types the table folds ([eventTables]); each
	// type is a zero payload of the catalog, so the list compiles only
	// with real types.
	folds []events.Payload
	// foldsAll makes the table fold every known event type (those of
	// the other tables' folds and [ignoredEvents]) without making one
	// known.
	foldsAll bool
	// deletes are types among folds whose event deletes the row of its
	// key, in a [keyed] table: the row leaves the table in the flush's
	// transaction, as if the key never had one, and the key's next event
	// starts a new row (session_selection: SessionPruned). Such an event
	// is void while the key's session has an open turn ([openTurns]): a
	// prune racing a turn's start, as the engine folds it.
	deletes []events.Payload
	// rows is how the table caches and writes its rows during a
	// catch-up ([keyed], [appended] or the table's own); zero for a
	// table the projector does not write row by row (projection_meta,
	// checkpoint).
	rows cacheOf

	// Derived by register.
	names    []string        // column names in table order
	list     string          // names joined with ", " (a SELECT list)
	orderBy  string          // the key columns joined with ", "
	timeCols map[string]bool // columns holding Unix ms
	deleted  map[string]bool // the types of deletes (nil: none)
	delSQL   string          // the DELETE of one row by its key (with deletes)
}

// column is one column: its name, SQL type (TEXT or INTEGER) and an
// optional CHECK. Every column is NOT NULL (strings are ” and numbers 0
// when unset), except a single-column primary key, declared PRIMARY KEY.
type column struct {
	name, typ string
	check     string
	// millis marks a time column (Unix ms): dumps and JSON render it as
	// RFC 3339 UTC with milliseconds, null when 0.
	millis bool
}

// text, integer and millis declare TEXT, INTEGER and time columns.
func text(name string) column    { return column{name: name, typ: "TEXT"} }
func integer(name string) column { return column{name: name, typ: "INTEGER"} }
func millis(name string) column  { return column{name: name, typ: "INTEGER", millis: true} }

// index is a secondary index on some columns.
type index struct {
	name    string
	columns []string
}

// tables are the projection tables in [table].order: the schema's
// creation order and the dump's order.
var tables []*table

// register derives t's column lists, adds it to [tables] and returns it.
// Table files call it in their package-level declaration.
func register(t *table) *table {
	t.names = make([]string, len(t.columns))
	t.timeCols = map[string]bool{}
	for i, c := range t.columns {
		t.names[i] = c.name
		if c.millis {
			t.timeCols[c.name] = true
		}
	}
	t.list = strings.Join(t.names, ", ")
	t.orderBy = strings.Join(t.names[:t.key], ", ")
	if len(t.deletes) > 0 {
		t.deleted = map[string]bool{}
		for _, p := range t.deletes {
			t.deleted[p.EventType()] = true
		}
		t.delSQL = "DELETE FROM " + t.name + " WHERE " + t.keyWhere()
	}
	i, _ := slices.BinarySearchFunc(tables, t, func(a, b *table) int { return cmp.Compare(a.order, b.order) })
	tables = slices.Insert(tables, i, t)
	return t
}

// createSQL is t's CREATE TABLE, its indexes and its seed, each statement
// ending with ";\n". Columns are aligned one a line, as sqlite_master
// keeps the text.
func (t *table) createSQL() string {
	var b strings.Builder
	width := 0
	for _, c := range t.columns {
		width = max(width, len(c.name))
	}
	b.WriteString("CREATE TABLE " + t.name + " (\n")
	for i, c := range t.columns {
		b.WriteString("\t" + c.name + strings.Repeat(" ", width+1-len(c.name)) + c.typ)
		if t.key == 1 && i == 0 {
			b.WriteString(" PRIMARY KEY")
		} else {
			b.WriteString(" NOT NULL")
		}
		if c.check != "" {
			b.WriteString(" CHECK (" + c.check + ")")
		}
		if i < len(t.columns)-1 || t.key > 1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	if t.key > 1 {
		b.WriteString("\tPRIMARY KEY (" + t.orderBy + ")\n")
	}
	b.WriteString(")")
	if t.withoutRowID {
		b.WriteString(" WITHOUT ROWID")
	}
	b.WriteString(";\n")
	for _, ix := range t.indexes {
		b.WriteString("CREATE INDEX " + ix.name + " ON " + t.name + " (" + strings.Join(ix.columns, ", ") + ");\n")
	}
	if t.seed != "" {
		b.WriteString(t.seed + ";\n")
	}
	return b.String()
}

// putSQL is the statement that writes one row (every column, in table
// order).
func (t *table) putSQL() string { return t.putRowsSQL(1) }

// putRowsSQL is putSQL for n rows in one statement: SQLite inserts the
// rows of a VALUES list one after the other, each with the ON CONFLICT
// clause, so it writes what n putSQL statements in a row write.
func (t *table) putRowsSQL(n int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(t.names)), ", ") + ")"
	q := "INSERT INTO " + t.name + " (" + t.list + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	switch {
	case t.onConflict != "":
		return q + " " + t.onConflict
	case t.upsert:
		set := make([]string, 0, len(t.names)-t.key)
		for _, c := range t.names[t.key:] {
			set = append(set, c+" = excluded."+c)
		}
		return q + " ON CONFLICT (" + t.orderBy + ") DO UPDATE SET " + strings.Join(set, ", ")
	}
	return q
}

// getSQL is the statement that reads one row's non-key columns by its key.
func (t *table) getSQL() string {
	return "SELECT " + strings.Join(t.names[t.key:], ", ") + " FROM " + t.name + " WHERE " + t.keyWhere()
}

// keyWhere matches one row by its key columns (the arguments in key
// order).
func (t *table) keyWhere() string {
	where := make([]string, t.key)
	for i, c := range t.names[:t.key] {
		where[i] = c + " = ?"
	}
	return strings.Join(where, " AND ")
}

// schemaSQL creates every table of [SchemaVersion], in order.
func schemaSQL() string {
	var b strings.Builder
	for _, t := range tables {
		b.WriteString(t.createSQL())
	}
	return b.String()
}

// dropSQL removes every projection table (a rebuild), in reverse order.
func dropSQL() string {
	var b strings.Builder
	for _, t := range slices.Backward(tables) {
		b.WriteString("DROP TABLE IF EXISTS " + t.name + ";\n")
	}
	return b.String()
}
