package engine

// SetBeforeAppend installs a hook run between each decision and its append
// (tests in package engine_test force races with it).
func SetBeforeAppend(e *Engine, f func(subject string)) { e.beforeAppend = f }
