package projections

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Dump writes the canonical dump of every projection table to w: for each
// table in a fixed order a header line "# <table>", then one JSON object
// per row in primary-key order, with the columns in table order, integers
// as JSON numbers, text as JSON strings, and time columns (Unix ms) as
// RFC 3339 UTC strings with milliseconds (null when 0). The same
// projection state always gives the same bytes, whatever the batch sizes
// and restarts that built it.
func (db *DB) Dump(ctx context.Context, w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, t := range tables {
		if t.internal {
			continue
		}
		fmt.Fprintf(bw, "# %s\n", t.name)
		if err := db.dumpTable(ctx, bw, t); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// DumpHash returns "sha256:<hex>" of [DB.Dump]'s bytes.
func (db *DB) DumpHash(ctx context.Context) (string, error) {
	h := sha256.New()
	if err := db.Dump(ctx, h); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func (db *DB) dumpTable(ctx context.Context, w *bufio.Writer, t *table) error {
	rows, err := db.sql.QueryContext(ctx, "SELECT * FROM "+t.name+" ORDER BY "+t.orderBy)
	if err != nil {
		return db.wrap(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return db.wrap(err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var line []byte
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return db.wrap(err)
		}
		line = append(line[:0], '{')
		for i, c := range cols {
			if i > 0 {
				line = append(line, ',')
			}
			line = appendJSONString(line, c)
			line = append(line, ':')
			line = appendValue(line, t.timeCols[c], vals[i])
		}
		line = append(line, '}', '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return db.wrap(rows.Err())
}

// appendValue renders one column value canonically; isTime says the
// column holds Unix ms.
func appendValue(b []byte, isTime bool, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case int64:
		if isTime {
			if x == 0 {
				return append(b, "null"...)
			}
			return appendJSONString(b, FormatMillis(x))
		}
		return strconv.AppendInt(b, x, 10)
	case string:
		return appendJSONString(b, x)
	case []byte:
		return appendJSONString(b, string(x))
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	default:
		return appendJSONString(b, fmt.Sprint(x))
	}
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// FormatMillis renders Unix ms as RFC 3339 UTC with milliseconds, e.g.
// "2026-01-06T10:40:00.000Z"; 0 gives "".
func FormatMillis(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
