// Package archtest holds no code: its tests enforce the layout that
// docs/architecture.md draws. Each package of the module sits in one layer
// and imports only packages of lower layers (or of its own folder), and
// only events and its embedded server touch NATS.
package archtest
