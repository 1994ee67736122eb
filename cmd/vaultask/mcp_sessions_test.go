package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/fakeanthropic"
	"github.com/vaultask/vaultask/tstest/fakellm"
)

// sessionServe is a `vaultask serve` that a test can restart on the same
// address and index, as a NAS restarts the container: it keeps the state of
// one MCP session only (mcp.max_sessions 1) and logs at debug level, which
// names each session whose state it keeps and drops.
type sessionServe struct {
	t   *testing.T
	env []string
	url string
	cur *served
}

const sessionsKey = "sessions-test-key"

func startSessionServe(t *testing.T) *sessionServe {
	t.Helper()
	srv, db := clientVault(t)
	up := fakellm.New()
	t.Cleanup(up.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ss := &sessionServe{t: t, url: "http://" + addr, env: append(serveEnv(t, srv, db, up),
		"VAULTASK_API__KEY="+sessionsKey, "VAULTASK_MCP__MAX_SESSIONS=1", "VAULTASK_LOG__LEVEL=debug", "VAULTASK_API__LISTEN="+addr)}
	ss.start()
	waitEmbedded(t, ss.cur, sessionsKey, 7)
	return ss
}

func (ss *sessionServe) start() {
	ss.t.Helper()
	listen := envValue(ss.env, "VAULTASK_API__LISTEN")
	ss.cur = startServe(ss.t, ss.env, func(m *Main) { m.Env = append(m.Env, "VAULTASK_API__LISTEN="+listen) })
	if ss.cur.url != ss.url {
		ss.t.Fatalf("serve listens on %s, want %s", ss.cur.url, ss.url)
	}
}

// restart stops serve and starts it again on the same address and index.
func (ss *sessionServe) restart() {
	ss.t.Helper()
	if err := ss.cur.stop(); err != nil {
		ss.t.Fatalf("serve stopped with %v", err)
	}
	ss.start()
}

// evict opens new MCP sessions until serve holds none of the sessions
// given, which its log must then say it dropped.
func (ss *sessionServe) evict(sessions ...string) {
	ss.t.Helper()
	for range 2 {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"evict","version":"1"}}}`
		req, _ := http.NewRequest(http.MethodPost, ss.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+sessionsKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ss.t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			ss.t.Fatalf("initialize: %d", resp.StatusCode)
		}
	}
	log := ss.cur.stderr.String()
	for _, id := range sessions {
		if !strings.Contains(log, "state dropped") || !strings.Contains(log, "session="+id+" reason=") {
			ss.t.Fatalf("serve's log does not say it dropped the state of session %s:\n%s", id, log)
		}
	}
}

// kept are the sessions serve's log says it kept the state of, in order.
func (ss *sessionServe) kept() []string {
	var out []string
	for line := range strings.Lines(ss.cur.stderr.String()) {
		if strings.Contains(line, "state kept") {
			if _, after, ok := strings.Cut(line, "session="); ok {
				out = append(out, strings.Fields(after)[0])
			}
		}
	}
	return out
}

// The official MCP TypeScript SDK's sessions, one of the whole vault and
// one opened on /mcp?allow_web=true, go on working with their scopes after
// serve dropped their state and after serve restarted: Claude Code and
// other clients never initialize again.
func TestMCPSDKSessionsOutliveEvictionAndRestart(t *testing.T) {
	ss := startSessionServe(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; the client tests need Node.js (see the README)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "mcp-sessions.test.mjs")
	cmd.Dir = clientsDir
	cmd.Env = append(os.Environ(), "VAULTASK_URL="+ss.url, "VAULTASK_KEY="+sessionsKey)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var steps []string
	ok := false
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		var line struct {
			Step     string
			Sessions []string
			OK       bool
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			t.Logf("mcp-sessions.test.mjs: %s", sc.Text())
			continue
		}
		switch line.Step {
		case "evict":
			ss.evict(line.Sessions...)
		case "restart":
			ss.restart()
		}
		if line.Step != "" {
			steps = append(steps, line.Step)
			fmt.Fprintln(stdin, "go")
		}
		ok = ok || line.OK
	}
	if err := cmd.Wait(); err != nil || !ok {
		t.Fatalf("node mcp-sessions.test.mjs: %v, finished %v, steps %v\n%s", err, ok, steps, stderr.String())
	}
	if strings.Join(steps, ",") != "evict,restart" {
		t.Errorf("steps %v, want evict, restart", steps)
	}
}

// claudeCode is the Claude Code CLI installed in tests/clients.
func claudeCode(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(clientsDir, "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Claude Code is not installed: run scripts/setup.sh (npm ci in tests/clients): %v", err)
	}
	return bin
}

// sessionProtocolOnly stands in front of serve as an MCP server that does
// not speak protocol version 2026-07-28, which has no sessions: it answers
// a request of that version as mcp-go answers a version it does not know,
// 400, and passes everything else through. Claude Code then falls back to
// initialize and a session, as it does with such servers.
func sessionProtocolOnly(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // serve is down while it restarts
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Mcp-Protocol-Version"); v >= "2026-07-28" {
			http.Error(w, "Unsupported protocol version: "+v, http.StatusBadRequest)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// runClaude runs Claude Code in print mode with vaultask at mcpURL as its
// one MCP server and api as its model, and returns its result line.
func runClaude(t *testing.T, api *fakeanthropic.Server, mcpURL string) string {
	t.Helper()
	home := t.TempDir()
	mcpConfig := filepath.Join(home, "mcp.json")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"vaultask": map[string]any{
		"type": "http", "url": mcpURL, "headers": map[string]string{"Authorization": "Bearer " + sessionsKey}}}})
	if err := os.WriteFile(mcpConfig, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudeCode(t), "-p", "What did I buy on Monday? Read my journal.",
		"--mcp-config", mcpConfig, "--strict-mcp-config", "--allowedTools", claudeReadTool, "--output-format", "json")
	cmd.Dir = home
	// ENABLE_TOOL_SEARCH=false offers the model the MCP tools at once, not
	// behind a search for them.
	cmd.Env = append(os.Environ(), "HOME="+home, "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
		"ANTHROPIC_BASE_URL="+api.URL(), "ANTHROPIC_API_KEY=sk-ant-test", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1", "ENABLE_TOOL_SEARCH=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
	var res struct {
		Result  string `json:"result"`
		IsError bool   `json:"is_error"`
	}
	last := strings.TrimSpace(string(out))
	last = last[strings.LastIndexByte(last, '\n')+1:]
	if err := json.Unmarshal([]byte(last), &res); err != nil || res.IsError {
		t.Fatalf("claude -p printed %s (%v)", out, err)
	}
	return res.Result
}

const claudeReadTool = "mcp__vaultask__vault_read"

// Claude Code itself, in print mode with vaultask as its MCP server and a
// fake Anthropic API on loopback as its model, which asks twice for a
// personal note: after serve dropped the state of Claude Code's session,
// and after serve restarted. Both tool calls read the note, as the whole
// vault's session may: its id kept its scope. Claude Code 2.1 speaks
// protocol version 2026-07-28, which has no sessions, to a server that
// does (vaultask), and falls back to initialize and a session with one
// that does not: both are run.
func TestClaudeCodeSessionOutlivesEvictionAndRestart(t *testing.T) {
	claudeCode(t)
	ss := startSessionServe(t)
	for _, tc := range []struct {
		name     string
		sessions bool
	}{{"session protocol", true}, {"sessionless protocol 2026-07-28", false}} {
		t.Run(tc.name, func(t *testing.T) {
			api := fakeanthropic.New()
			t.Cleanup(api.Close)
			mcpURL := ss.url + "/mcp"
			if tc.sessions {
				mcpURL = sessionProtocolOnly(t, ss.url) + "/mcp"
			}
			keptBefore := len(ss.kept())
			var mu sync.Mutex // results are written by the fake API's handler
			var results []string
			api.Turn = func(req fakeanthropic.Request) fakeanthropic.Reply {
				mu.Lock()
				defer mu.Unlock()
				if !req.HasTool(claudeReadTool) { // a side request of Claude Code's own
					return fakeanthropic.Reply{Text: "ok"}
				}
				for _, r := range req.ToolResults() {
					if r.IsError {
						t.Errorf("a tool call failed: %s", r.ResultText())
					}
					results = append(results, r.ResultText())
				}
				switch len(results) {
				case 0:
					var claude []string
					if kept := ss.kept(); len(kept) > keptBefore {
						claude = kept[keptBefore : keptBefore+1]
					}
					if tc.sessions != (len(claude) == 1) {
						t.Errorf("Claude Code's sessions before its first turn: %v, want one: %v", claude, tc.sessions)
					}
					ss.evict(claude...)
				case 1:
					ss.restart()
				default:
					return fakeanthropic.Reply{Text: "Read twice."}
				}
				return fakeanthropic.Reply{ToolName: claudeReadTool, ToolInput: map[string]any{"path": "Journal/2026-11-30"}}
			}
			if got := runClaude(t, api, mcpURL); got != "Read twice." {
				t.Errorf("claude -p result %q", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(results) != 2 {
				t.Fatalf("%d tool results, want 2: %q", len(results), results)
			}
			for i, r := range results {
				if !strings.Contains(r, "zebrafinch") {
					t.Errorf("the tool call after serve %s did not read the personal note: %s", []string{"dropped the session's state", "restarted"}[i], r)
				}
			}
		})
	}
}
