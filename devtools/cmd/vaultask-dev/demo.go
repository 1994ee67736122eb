package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// The demo's CouchDB account and database.
const (
	demoUser     = "admin"
	demoPassword = "s3cret"
	demoDatabase = "demo"
	// demoAdminKey opens /admin in the demo when VAULTASK_API__ADMIN_KEY
	// is not set.
	demoAdminKey = "demo-admin-key"
	// halfSynced is the demo note written without its chunks, so /status
	// and /admin show a note waiting for them.
	halfSynced = "Projects/Half-synced note.md"
)

// demoOptions are the demo's flags.
type demoOptions struct {
	vault, dir, bin, couchServer, listen string
	couchPort                            int
	readyTimeout                         time.Duration
}

// child is a process the demo started, in its own process group so that
// Ctrl-C reaches only the demo, which stops the children in order.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited, with err set
	err  error
}

// start runs cmd as a child that dies with the demo: SIGKILL if the demo
// dies first (Pdeathsig), and stdin a pipe the demo holds.
func start(name string, cmd *exec.Cmd) (*child, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if _, err := cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// stop sends sig, waits up to grace, then kills.
func (c *child) stop(sig os.Signal, grace time.Duration) {
	_ = c.cmd.Process.Signal(sig)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

var (
	couchListening = regexp.MustCompile(`^listening on (http://\S+?)/? pid=`)
	serveListening = regexp.MustCompile(`serving on (http://\S+)`)
)

// watchLines copies r to w line by line and sends the first match of re
// on found; the rest is copied as it comes.
func watchLines(r io.Reader, w io.Writer, re *regexp.Regexp, found chan<- string) {
	sc := bufio.NewScanner(r)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		if !sent {
			if m := re.FindStringSubmatch(line); m != nil {
				found <- m[1]
				sent = true
			}
		}
		if w != nil {
			fmt.Fprintln(w, line)
		}
	}
	if !sent {
		close(found)
	}
}

func demo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	var o demoOptions
	fs.StringVar(&o.vault, "vault", "demo/vault", "the folder loaded into the demo's CouchDB")
	fs.StringVar(&o.dir, "dir", envOr("VAULTASK_DEMO_DIR", "data/demo"), "where the demo keeps its index and overrides file")
	fs.StringVar(&o.bin, "bin", "bin/vaultask", "the vaultask binary")
	fs.StringVar(&o.couchServer, "couch-server", "tstest/couchtest/server", "the CouchDB-compatible test server's folder")
	fs.StringVar(&o.listen, "listen", envOr("VAULTASK_API__LISTEN", "127.0.0.1:8080"), "where vaultask serve listens")
	fs.IntVar(&o.couchPort, "couch-port", 15984, "the test CouchDB's port on 127.0.0.1; 0 picks a free one")
	fs.DurationVar(&o.readyTimeout, "ready-timeout", 3*time.Minute, "how long to wait for vaultask to be ready")
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("%w: demo takes flags only", errUsage)
	}
	return runDemo(ctx, o, stdout, stderr)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func runDemo(ctx context.Context, o demoOptions, stdout, stderr io.Writer) error {
	began := time.Now()
	if _, err := os.Stat(filepath.Join(o.couchServer, "node_modules", "express-pouchdb")); err != nil {
		return fmt.Errorf("the test CouchDB's packages are missing in %s: run scripts/setup.sh", o.couchServer)
	}
	if _, err := os.Stat(o.bin); err != nil {
		return fmt.Errorf("%s: build it first (go build -tags sqlite_fts5 -o %s ./cmd/vaultask), or run scripts/demo.sh", o.bin, o.bin)
	}
	// The CouchDB is in memory, so the index starts afresh with it.
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return err
	}
	index := filepath.Join(o.dir, "vaultask.db")
	for _, f := range []string{index, index + "-wal", index + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}

	// 1. The CouchDB-compatible server, on loopback.
	couchCmd := exec.Command("node", "server.js")
	couchCmd.Dir = o.couchServer
	couchCmd.Env = append(os.Environ(), "COUCH_HOST=127.0.0.1", fmt.Sprintf("COUCH_PORT=%d", o.couchPort),
		"COUCH_ADMIN_USER="+demoUser, "COUCH_ADMIN_PASS="+demoPassword, "COUCH_EXIT_ON_STDIN_EOF=1")
	couchOut, err := couchCmd.StdoutPipe()
	if err != nil {
		return err
	}
	var couchLog strings.Builder
	couchCmd.Stderr = &couchLog
	couch, err := start("the test CouchDB", couchCmd)
	if err != nil {
		return err
	}
	defer couch.stop(syscall.SIGTERM, 5*time.Second)
	couchFound := make(chan string, 1)
	go watchLines(couchOut, nil, couchListening, couchFound)
	var couchURL string
	select {
	case u, ok := <-couchFound:
		if !ok {
			<-couch.done
			if strings.Contains(couchLog.String(), "EADDRINUSE") {
				return fmt.Errorf("port %d is in use (another demo, or a CouchDB?): stop it or pass -couch-port 0", o.couchPort)
			}
			return fmt.Errorf("the test CouchDB stopped: %s", strings.TrimSpace(couchLog.String()))
		}
		couchURL = u
	case <-time.After(30 * time.Second):
		return errors.New("the test CouchDB did not start within 30s")
	case <-ctx.Done():
		return nil
	}

	// 2. The demo vault, in LiveSync's format.
	u, _ := url.Parse(couchURL)
	u.User = url.UserPassword(demoUser, demoPassword)
	u.Path = "/" + demoDatabase
	dbURL := u.String()
	c, err := client(dbURL)
	if err != nil {
		return err
	}
	n, err := loadVault(ctx, c, o.vault, []string{halfSynced})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "demo: loaded %d files from %s into the test CouchDB at %s/%s, as LiveSync writes them\n", n, o.vault, couchURL, demoDatabase)

	// 3. vaultask serve, following it.
	serveCmd := exec.Command(o.bin, "serve")
	serveCmd.Env = append(os.Environ(),
		"VAULTASK_CONFIG="+envOr("VAULTASK_CONFIG", "config.yaml"),
		"VAULTASK_OVERRIDES_FILE="+filepath.Join(o.dir, "overrides.json"),
		"VAULTASK_VAULT__SOURCE=couchdb",
		"VAULTASK_VAULT__URL="+couchURL,
		"VAULTASK_VAULT__DATABASE="+demoDatabase,
		"VAULTASK_VAULT__USER="+demoUser,
		"VAULTASK_VAULT__PASSWORD="+demoPassword,
		"VAULTASK_INDEX__PATH="+index,
		`VAULTASK_SENSITIVITY__PERSONAL_PATHS=["Journal/**","Tastings/**"]`,
		"VAULTASK_API__LISTEN="+o.listen,
		"VAULTASK_API__ADMIN_KEY="+envOr("VAULTASK_API__ADMIN_KEY", demoAdminKey),
		"VAULTASK_API__KEY=", // the demo is open on loopback, as its banner and curl line say, whatever this shell exports
	)
	serveOut, err := serveCmd.StdoutPipe()
	if err != nil {
		return err
	}
	serveCmd.Stderr = stderr
	serve, err := start("vaultask serve", serveCmd)
	if err != nil {
		return err
	}
	defer serve.stop(os.Interrupt, 15*time.Second)
	serveFound := make(chan string, 1)
	go watchLines(serveOut, stdout, serveListening, serveFound)
	var base string
	select {
	case u, ok := <-serveFound:
		if !ok {
			<-serve.done
			return fmt.Errorf("vaultask serve stopped: %v (its log is above)", serve.err)
		}
		base = u
	case <-time.After(30 * time.Second):
		return errors.New("vaultask serve did not listen within 30s")
	case <-ctx.Done():
		return nil
	}
	st, err := waitReady(ctx, base, o.readyTimeout, serve)
	if err != nil || ctx.Err() != nil {
		return err
	}
	printBanner(stdout, base, dbURL, st, time.Since(began), serve.cmd.Process.Pid, couch.cmd.Process.Pid)

	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout, "demo: stopping vaultask serve and the test CouchDB")
		return nil
	case <-serve.done:
		return fmt.Errorf("vaultask serve stopped: %v (its log is above)", serve.err)
	case <-couch.done:
		return fmt.Errorf("the test CouchDB stopped: %v %s", couch.err, couchLog.String())
	}
}

// demoStatus is what the demo reads of /status.
type demoStatus struct {
	Index struct {
		Notes            int `json:"notes"`
		Chunks           int `json:"chunks"`
		EmbeddingBacklog int `json:"embedding_backlog"`
		IncompleteNotes  int `json:"incomplete_notes"`
	} `json:"index"`
}

// waitReady waits for /readyz, then for the embedder to have embedded
// every chunk, so the first question already gets vector search.
func waitReady(ctx context.Context, base string, timeout time.Duration, serve *child) (demoStatus, error) {
	deadline := time.Now().Add(timeout)
	var st demoStatus
	for {
		ready := false
		if resp, err := http.Get(base + "/readyz"); err == nil {
			ready = resp.StatusCode == http.StatusOK
			resp.Body.Close()
		}
		if ready {
			if resp, err := http.Get(base + "/status"); err == nil {
				if resp.StatusCode != http.StatusOK {
					resp.Body.Close()
					return st, fmt.Errorf("vaultask's /status answered %s", resp.Status)
				}
				err = json.NewDecoder(resp.Body).Decode(&st)
				resp.Body.Close()
				if err == nil && st.Index.EmbeddingBacklog == 0 {
					return st, nil
				}
			}
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("vaultask was not ready within %v: see %s/status", timeout, base)
		}
		select {
		case <-serve.done:
			return st, fmt.Errorf("vaultask serve stopped: %v (its log is above)", serve.err)
		case <-ctx.Done():
			return st, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func printBanner(w io.Writer, base, dbURL string, st demoStatus, took time.Duration, servePid, couchPid int) {
	put := "bin/vaultask-dev put"
	if dbURL != defaultDB {
		put += " -db " + dbURL
	}
	generation := "Answers are the retrieved passages (extractive) until a model key is set: VAULTASK_OPENROUTER_API_KEY or VAULTASK_OPENAI_API_KEY (see README)."
	if os.Getenv("VAULTASK_OPENROUTER_API_KEY") != "" || os.Getenv("VAULTASK_OPENAI_API_KEY") != "" {
		generation = "Answers are generated by the configured model (a model key is set)."
	}
	fmt.Fprintf(w, `
vaultask demo ready in %.1fs: %d notes and %d chunks indexed, followed live from the test CouchDB; %s (see /status).

  Chat        %[5]s/chat
  Admin       %[5]s/admin   (admin key: %[6]s)
  OpenAI API  %[5]s/v1      (model "vault-ask"; any API key)
  MCP         %[5]s/mcp
  Status      %[5]s/status

  Claude Code:  claude mcp add --transport http vaultask %[5]s/mcp

Ask from a shell:
  curl -s %[5]s/v1/chat/completions -H 'Content-Type: application/json' \
    -d '{"model":"vault-ask","messages":[{"role":"user","content":"At what temperature do I bake the sourdough?"}]}'

Edit a note as your phone would; it is answerable a second later:
  %[7]s "Recipes/Focaccia.md" <<< "# Focaccia
  Dimple the dough with oiled fingers and bake it at 230 °C for 20 minutes."

%[8]s
Ctrl-C stops the demo: vaultask serve (pid %[9]d) and the test CouchDB (pid %[10]d).
`, took.Seconds(), st.Index.Notes, st.Index.Chunks, waiting(st.Index.IncompleteNotes),
		base, envOr("VAULTASK_API__ADMIN_KEY", demoAdminKey), put, generation, servePid, couchPid)
}

// waiting says how many notes wait for missing chunks.
func waiting(n int) string {
	if n == 1 {
		return "1 note waits for its missing chunks"
	}
	return fmt.Sprintf("%d notes wait for missing chunks", n)
}
