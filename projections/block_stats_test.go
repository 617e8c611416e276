package projections_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// Issue 17: after the codex-usage-limit scenario, `fledger stats` (the
// usage_stats projection) shows the subscription block until exactly the
// provider's reset — the failure at +300 ms plus 86 400 s — with its
// reason, source and model, and the status says so until that moment.
func TestUsageStats_ShowTheSubscriptionBlock(t *testing.T) {
	sc, err := scenario.LoadFile(filepath.Join("..", "fixtures", "scenarios", "codex-usage-limit.yaml"))
	testutil.NoError(t, err)
	st, _ := openStore(t)
	_, err = scenario.Run(context.Background(), st, sc, scenario.Options{Agent: "main"})
	testutil.NoError(t, err)
	db := openDB(t, filepath.Join(t.TempDir(), "p.sqlite"))
	catchUp(t, db, st, 0)
	rows, err := db.UsageStats(context.Background(), projections.StatsFilter{Profile: "openai:dana@example.com"})
	testutil.NoError(t, err)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	u := rows[0]
	reset := sc.Start.Add(300*time.Millisecond + 86400*time.Second)
	if int64(u.BlockedUntil) != reset.UnixMilli() || u.BlockedReason != "subscription_limit" || u.BlockedSource != "codex_rate_limits" ||
		u.BlockedModel != "gpt-5" || u.CooldownUntil != 0 || u.ErrorCount != 1 || u.FailureCounts["rate_limit"] != 1 {
		t.Fatalf("row %+v, want blocked until %s", u, reset)
	}
	if got, want := u.Status(sc.Start.Add(time.Hour)), "blocked until 2026-03-11T08:00:00.300Z, 23h 0m 1s (subscription_limit from codex_rate_limits, model gpt-5)"; got != want {
		t.Fatalf("status %q, want %q", got, want)
	}
	if got := u.Status(reset); got != "ready" {
		t.Fatalf("status at the reset %q", got)
	}
}
