package couchtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Default admin account of the started server, and of COUCH_URL when
// COUCH_ADMIN_USER or COUCH_ADMIN_PASS is unset.
const (
	DefaultUser     = "admin"
	DefaultPassword = "s3cret"
)

// startTimeout bounds how long Start waits for server.js to listen; it is
// ready in about 0.3 s with node_modules installed.
const startTimeout = 30 * time.Second

// Server is a running CouchDB-compatible server with an admin account.
type Server struct {
	// URL is the server root without a trailing slash, such as
	// http://127.0.0.1:40123, so URL+"/"+db is a database URL.
	URL string
	// User and Password are the admin account; every request the helpers
	// make uses them (basic auth).
	User, Password string
}

// shared is the server of this test binary: set up once by Start, torn down by
// Main.
var shared struct {
	once sync.Once
	srv  *Server
	err  error
	proc *process
}

// errStopped is what Start reports once Main has stopped the server.
var errStopped = errors.New("couchtest: Start called after Main stopped the server")

// Start returns the shared server for this test binary. When COUCH_URL is set
// it uses that server (COUCH_ADMIN_USER and COUCH_ADMIN_PASS, default
// admin/s3cret); otherwise it starts server/server.js on a free loopback port,
// once per process. It fails tb, with the server's log, if the server can't
// be reached or started; every later call fails the same way.
func Start(tb testing.TB) *Server {
	tb.Helper()
	shared.once.Do(func() {
		if u := os.Getenv("COUCH_URL"); u != "" {
			shared.srv, shared.err = fromEnv(u)
			return
		}
		shared.srv, shared.proc, shared.err = launch()
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.srv
}

// Main runs the package's tests and then kills the server Start launched, if
// any:
//
//	func TestMain(m *testing.M) { os.Exit(couchtest.Main(m)) }
//
// Without it the server still exits with the test binary, when the pipe on
// its stdin closes.
func Main(m *testing.M) int {
	code := m.Run()
	shared.once.Do(func() { shared.err = errStopped })
	if p := shared.proc; p != nil {
		p.stop()
	}
	return code
}

// Launch is Start for a program, such as the benchmarks: it starts its own
// server/server.js (or uses COUCH_URL's) and returns a stop function that
// kills a started server. The server also exits when this process does.
func Launch() (*Server, func(), error) {
	if u := os.Getenv("COUCH_URL"); u != "" {
		s, err := fromEnv(u)
		return s, func() {}, err
	}
	s, p, err := launch()
	if err != nil {
		return nil, nil, err
	}
	return s, p.stop, nil
}

// CreateDB creates database name; DeleteDB deletes it. Tests use NewDB,
// which does both.
func (s *Server) CreateDB(name string) error {
	return s.do(http.MethodPut, url.PathEscape(name), nil, nil)
}

// DeleteDB deletes database name.
func (s *Server) DeleteDB(name string) error {
	return s.do(http.MethodDelete, url.PathEscape(name), nil, nil)
}

func fromEnv(raw string) (*Server, error) {
	s := &Server{
		URL:      strings.TrimRight(raw, "/"),
		User:     envOr("COUCH_ADMIN_USER", DefaultUser),
		Password: envOr("COUCH_ADMIN_PASS", DefaultPassword),
	}
	if err := s.do(http.MethodGet, "", nil, nil); err != nil {
		return nil, fmt.Errorf("couchtest: COUCH_URL=%s: %w", raw, err)
	}
	return s, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// process is a running server.js.
type process struct {
	cmd *exec.Cmd
	// stdin is never written: server.js exits when it closes, which the
	// kernel does if this process dies without running Main's cleanup.
	stdin io.WriteCloser
}

func (p *process) stop() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

func launch() (*Server, *process, error) {
	dir, err := serverDir()
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "express-pouchdb")); err != nil {
		return nil, nil, fmt.Errorf("couchtest: %s/node_modules is missing: run scripts/setup.sh (it runs npm ci there), or set COUCH_URL", dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, nil, fmt.Errorf("couchtest: the test server needs Node.js: %w", err)
	}
	cmd := exec.Command(node, "server.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"COUCH_HOST=127.0.0.1",
		"COUCH_PORT=0",
		"COUCH_ADMIN_USER="+DefaultUser,
		"COUCH_ADMIN_PASS="+DefaultPassword,
		"COUCH_EXIT_ON_STDIN_EOF=1",
	)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("couchtest: %w", err)
	}
	// Its own pipe rather than the test binary's stdout, which go test waits on.
	out, w, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, nil, fmt.Errorf("couchtest: %w", err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		return nil, nil, fmt.Errorf("couchtest: start %s server.js: %w", node, err)
	}
	p := &process{cmd: cmd, stdin: stdin}

	var startLog strings.Builder
	listening := make(chan string, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		defer out.Close()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "listening on "); ok {
				u, _, _ := strings.Cut(rest, " ")
				listening <- u
				// The log is only reported when startup fails; keep draining so
				// later warnings never block the server on a full pipe.
				_, _ = io.Copy(io.Discard, out)
				return
			}
			startLog.WriteString(line + "\n")
		}
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case u := <-listening:
		return &Server{URL: strings.TrimRight(u, "/"), User: DefaultUser, Password: DefaultPassword}, p, nil
	case <-exited:
		err = p.cmd.Wait()
		return nil, nil, fmt.Errorf("couchtest: test server in %s exited (%v); its log:\n%s", dir, err, startLog.String())
	case <-timer.C:
		p.stop()
		<-exited
		return nil, nil, fmt.Errorf("couchtest: test server in %s did not listen within %v; its log:\n%s", dir, startTimeout, startLog.String())
	}
}

// repoRoot is the module root, found from this file's path as compiled (so it
// does not work in a -trimpath build).
func repoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", fmt.Errorf("couchtest: no absolute source path for this package (built with -trimpath?): %q", file)
	}
	return filepath.Join(filepath.Dir(file), "..", ".."), nil
}

func serverDir() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "tstest", "couchtest", "server"), nil
}

// DBURL returns the URL of database db, without credentials; with db empty,
// the server root.
func (s *Server) DBURL(db string) string {
	if db == "" {
		return s.URL
	}
	return s.URL + "/" + url.PathEscape(db)
}

// AuthURL is DBURL with the admin's user:password in it, for clients that
// take credentials in the URL (kivik then uses cookie auth).
func (s *Server) AuthURL(db string) string {
	scheme, rest, _ := strings.Cut(s.DBURL(db), "://")
	return scheme + "://" + url.UserPassword(s.User, s.Password).String() + "@" + rest
}

var dbCounter atomic.Int64

// NewDB creates a database with a name unique across processes (test name,
// pid, counter), so test binaries can share one COUCH_URL server, and deletes
// it in tb.Cleanup.
func (s *Server) NewDB(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t-%s-%d-%d", dbNamePart(tb.Name()), os.Getpid(), dbCounter.Add(1))
	if err := s.CreateDB(name); err != nil {
		tb.Fatalf("create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		if err := s.DeleteDB(name); err != nil {
			tb.Errorf("delete database %s: %v", name, err)
		}
	})
	return name
}

// dbNamePart maps a test name to characters CouchDB allows in database names
// and that need no escaping in a URL.
func dbNamePart(testName string) string {
	const maxLen = 80
	b := make([]byte, 0, min(len(testName), maxLen))
	for _, r := range strings.ToLower(testName) {
		if len(b) == maxLen {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			b = append(b, byte(r))
		default:
			b = append(b, '_')
		}
	}
	return string(b)
}
