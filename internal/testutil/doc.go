// Package testutil holds the helpers every test package shares: require-
// style assertions, store openers, an eventual-state check, a manual
// clock and the usual configuration. It is imported by tests only.
package testutil
