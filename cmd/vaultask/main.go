package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/vault"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := NewMain(os.Stdout, os.Stderr, os.Environ()).Run(ctx, os.Args[1:])
	stop()
	if errors.Is(err, errUsage) {
		if err != errUsage {
			fmt.Fprintln(os.Stderr, "vaultask:", err)
		}
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vaultask:", err)
		os.Exit(1)
	}
}

var (
	// errUsage means the command line was wrong: the usage text, or an
	// error wrapping errUsage that says what was wrong, was printed; the
	// exit status says so.
	errUsage = errors.New("usage")
	// errHelp means help was asked for and printed: a success.
	errHelp = errors.New("help")
)

// Main is the program with its outside world passed in, so tests run the
// real wiring with their own output and environment.
type Main struct {
	Stdout, Stderr io.Writer
	Env            []string

	// emb is the embedder loaded for embFor, shared by everything one
	// command runs (see embedder).
	embMu  sync.Mutex
	emb    *llm.Embedding
	embFor config.Models
	// active is the built-in model of the space activeFor, the one an
	// index searches while it re-embeds (see activeEmbedder).
	active    *llm.Embedding
	activeFor vault.EmbeddingSpace
	// built are the embedders the command built, closed when it returns.
	built []*llm.Embedding

	// drain is serve's drain time; zero is drainTimeout. Tests shorten it
	// to see a stream outlive it without waiting the full time.
	drain time.Duration
	// now is the clock progress is shown by; nil is time.Now. Tests move
	// it to see the lines a long drain prints.
	now func() time.Time
}

// NewMain returns a Main writing to stdout and stderr and reading env.
func NewMain(stdout, stderr io.Writer, env []string) *Main {
	return &Main{Stdout: stdout, Stderr: stderr, Env: env}
}

// clock is the time by m's clock.
func (m *Main) clock() time.Time {
	if m.now == nil {
		return time.Now()
	}
	return m.now()
}

type command struct {
	name, summary string
	run           func(ctx context.Context, m *Main, args []string) error
}

func commands() []command {
	return []command{
		{"index", "index the vault (or a folder with --from-dir) into the SQLite file", runIndex},
		{"follow", "follow the vault's changes into the index until interrupted", runFollow},
		{"reconcile", "make the index equal the whole vault, catching what the follower missed", runReconcile},
		{"stats", "print what the index holds", runStats},
		{"ask", "answer a question from the vault (--dry-run: retrieval only)", runAsk},
		{"serve", "follow the vault and answer over HTTP: OpenAI-compatible API, MCP, status, events", runServe},
		{"eval", "measure retrieval (recall@k, MRR, A/B arms) or the web trigger on a questions file", runEval},
		{"fetch-model", "fetch the built-in embedding models' files, each checked against its pinned sum", runFetchModel},
		{"healthcheck", "exit 0 when the running server's /healthz answers (for a container HEALTHCHECK)", runHealthcheck},
		{"version", "print the version", runVersion},
	}
}

const usageHead = `vaultask answers questions from an Obsidian vault.

Usage:
  vaultask <command> [flags]

Commands:
`

func (m *Main) usage() {
	fmt.Fprint(m.Stderr, usageHead)
	for _, c := range commands() {
		fmt.Fprintf(m.Stderr, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprint(m.Stderr, "\nRun `vaultask <command> --help` for a command's flags.\n")
}

// Run runs one subcommand.
func (m *Main) Run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		m.usage()
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, m, args[1:])
			m.closeEmbedders()
			if errors.Is(err, errHelp) {
				return nil
			}
			return err
		}
	}
	m.usage()
	return fmt.Errorf("unknown command %q", args[0])
}
