// Package testutil holds the helpers every test package shares: require-
// style assertions, a store opener, an eventual-state check and a manual
// clock. It is imported by tests only.
package testutil
