package classify

import (
	"runtime"
	"strconv"
)

type runtimeMemStats = runtime.MemStats

func readMem(m *runtime.MemStats) { runtime.GC(); runtime.ReadMemStats(m) }

func itoa(n int) string { return strconv.Itoa(n) }
