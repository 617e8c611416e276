package engine

// SetBeforeAppend installs a hook run between each decision and its append
// (tests in package engine_test force races with it).
func SetBeforeAppend(e *Engine, f func(subject string)) { e.beforeAppend = f }

// SetAfterSelect installs a hook run between a begin's selection and the
// decision of its start (tests force a selection in between with it).
func SetAfterSelect(e *Engine, f func(turnID string)) { e.afterSelect = f }

// SetBeforeSelect sets e's beforeSelect hook (nil: none).
func SetBeforeSelect(e *Engine, f func(turnID string)) { e.beforeSelect = f }
