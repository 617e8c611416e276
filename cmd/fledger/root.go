package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/events"
)

// globals holds the flags every subcommand shares.
type globals struct {
	// DataDir is where the embedded NATS server keeps its JetStream file store
	// and where projection databases live. Default ./fledger-data.
	DataDir string
	// NATSURL, when set, connects to an existing NATS server instead of
	// starting the embedded one; NATSFromEnv is whether it came from
	// NATS_URL (errors then say so).
	NATSURL     string
	NATSFromEnv bool
	// NATSUser, NATSPassword, NATSCreds, NATSTLSCA, NATSTLSCert and NATSTLSKey
	// authenticate to NATSURL.
	NATSUser, NATSPassword, NATSCreds  string
	NATSTLSCA, NATSTLSCert, NATSTLSKey string
	// Replicas is --replicas: the stream's replica count when created;
	// ReplicasSet says it was given.
	Replicas    int
	ReplicasSet bool
	// Log, when set (serve, view), is the command's logger: the store
	// logs through it too, so one process writes one log format
	// (default slog.Default()).
	Log *slog.Logger
	// FirstSeq is --first-seq: the first sequence of a stream fledger
	// creates (0 = 1), to continue an archived stream's sequences.
	FirstSeq uint64
	// Writes is set by the commands that append (run, serve, config
	// apply, auth order set/clear): with --nats naming the loopback
	// listener of an embedded server on --data and no credentials given,
	// they connect as its writer, the others as its read-only user.
	Writes bool
	// DataSet is whether --data was given: with --nats, projection
	// databases then live under it rather than in the user cache directory.
	DataSet bool
	// AtomicBatches is --atomic-batches: how group commit sends concurrent
	// appends (auto, on, off; events.WithAtomicBatches).
	AtomicBatches string
}

// subcommands are added by each command's file in its init function, so
// commands live in files of their own and root.go never changes.
var subcommands []func(g *globals) *cobra.Command

func register(f func(g *globals) *cobra.Command) { subcommands = append(subcommands, f) }

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "fledger",
		Short:         "Event-sourced failover ledger for LLM gateways",
		Long:          "fledger records every auth-profile rotation, cooldown, disable and model fallback step as an event on NATS JetStream, and rebuilds usageStats, session selection and model_fallback_decision logs from the events.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			// NATS_URL stands for --nats when it is not given, as for the
			// nats CLI (--nats "" forces the embedded server).
			if !cmd.Flags().Changed("nats") {
				g.NATSURL = os.Getenv("NATS_URL")
				g.NATSFromEnv = g.NATSURL != ""
			}
			g.DataSet = cmd.Flags().Changed("data")
			g.ReplicasSet = cmd.Flags().Changed("replicas")
			if strings.HasPrefix(cmd.Name(), "__complete") {
				return nil // shell completion reads what it can
			}
			if err := g.natsFlagsWithoutNATS(); err != nil {
				return err
			}
			if _, err := events.ParseAtomicBatches(g.AtomicBatches); err != nil {
				return fmt.Errorf("--atomic-batches %w", err)
			}
			if cmd.Flags().Changed("first-seq") && g.FirstSeq <= 1 {
				// An unset LAST in a rotation script ($((LAST+1)) is 1,
				// "$LAST" 0): say so rather than start at 1 as if the flag
				// were not given.
				return fmt.Errorf("--first-seq %d: every stream starts at 1 without the flag; to continue an archived stream, give its last sequence + 1 (docs/operations.md, \"Start a fresh stream\")", g.FirstSeq)
			}
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.DataDir, "data", "./fledger-data", "data directory for the embedded NATS server and projections")
	pf.StringVar(&g.NATSURL, "nats", "", "URL of an existing NATS server (default $NATS_URL; without either, start an embedded server on loopback)")
	pf.StringVar(&g.NATSUser, "nats-user", "", "user name for --nats")
	pf.StringVar(&g.NATSPassword, "nats-password", "", "password for --nats (or set FLEDGER_NATS_PASSWORD)")
	pf.StringVar(&g.NATSCreds, "nats-creds", "", "NATS credentials file for --nats")
	pf.StringVar(&g.NATSTLSCA, "nats-tls-ca", "", "CA certificate file to verify the NATS server")
	pf.StringVar(&g.NATSTLSCert, "nats-tls-cert", "", "client certificate file for NATS TLS")
	pf.StringVar(&g.NATSTLSKey, "nats-tls-key", "", "client key file for NATS TLS")
	pf.IntVar(&g.Replicas, "replicas", 1, "replicas of the FLEDGER stream when fledger creates it on --nats (1, 3 or 5; an existing stream keeps its own; the embedded server has 1)")
	pf.Uint64Var(&g.FirstSeq, "first-seq", 0, "first sequence of the FLEDGER stream when fledger creates it: the archived stream's last sequence + 1 to continue it (docs/operations.md, \"Archiving and long history\"; an existing stream created with another is refused)")
	pf.StringVar(&g.AtomicBatches, "atomic-batches", string(events.BatchesAuto), "how concurrent appends are sent: on = as atomic batches sharing one fsync (a server that fsyncs every write), off = pipelined, auto = on for the embedded server and replicated streams, off for a one-replica stream on another server (docs/operations.md)")
	for _, f := range subcommands {
		root.AddCommand(f(g))
	}
	completeFromProjections(root, g)
	return root
}
