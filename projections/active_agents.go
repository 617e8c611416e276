package projections

import "context"

// ActiveAgents lists the agents with events in the projection
// (agent_spans), the one with the stream's last commit first (stream
// order, not event time: a scenario recorded on a virtual clock in the
// past is still the agent just written), then by name: what a reader of
// a whole ledger (`fledger view`) serves, read without walking the
// stream.
func (db *DB) ActiveAgents(ctx context.Context) ([]string, error) {
	return db.strings(ctx, `SELECT agent FROM agent_spans WHERE agent != '' ORDER BY lastSeq DESC, agent`)
}

// strings runs a query of one text column and returns its values.
func (db *DB) strings(ctx context.Context, query string) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, query)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, db.wrap(err)
		}
		out = append(out, a)
	}
	return out, db.wrap(rows.Err())
}
