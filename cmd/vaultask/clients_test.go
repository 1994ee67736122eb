package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/couchtest"
	"github.com/vaultask/vaultask/tstest/fakellm"
	"github.com/vaultask/vaultask/tstest/livesyncput"
)

// clientsDir holds the real clients the tests drive (tests/clients), with
// their node_modules once scripts/setup.sh ran.
var clientsDir = filepath.Join("..", "..", "tests", "clients")

var citesNote = regexp.MustCompile(`\[\[(Recipes|99 topics)/[^\]|]+\|[^\]]+\]\]`)

// runClient runs one of tests/clients' scripts with env and returns the
// JSON object on its last line of output. A script fails on its first
// broken assertion; its output then says which.
func runClient(t *testing.T, script string, env []string, out any) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; the client tests need Node.js (see the README)")
	}
	if _, err := os.Stat(filepath.Join(clientsDir, "node_modules", "openai")); err != nil {
		t.Fatalf("the client packages are not installed: run scripts/setup.sh (npm ci in tests/clients): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = clientsDir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s%s", script, err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), out); err != nil {
		t.Fatalf("node %s printed no result: %v\n%s", script, err, stdout.String())
	}
}

// clientVault is a vault with what the MCP tools tell apart: an alias, an
// open and a personal namesake, a personal note linked from and linking to
// an open one, a topic with open and personal members, a long note.
func clientVault(t *testing.T) (*couchtest.Server, string) {
	t.Helper()
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	lp := &livesyncput.Client{DB: srv.DBURL(db), User: srv.User, Password: srv.Password}
	notes := map[string]string{
		"Recipes/Sourdough bread.md": "---\naliases: [Loaf]\n---\n# Sourdough bread\n\nFeed the [[Starter]] the night before. Knead the dough for ten minutes, then let it rise overnight in the fridge. Serve it with [[Recipes/Risotto|risotto]]; the first loaf was on [[2026-11-30]].\n",
		"Recipes/Starter.md":         "# Starter\n\nFeed the starter equal weights of flour and water every day.\n",
		"Recipes/Risotto.md":         "# Risotto\n\nStir the rice with warm stock, a ladle at a time, for eighteen minutes.\n",
		"Recipes/Long.md":            "# Long\n\n" + strings.Repeat("A long note about proving times and oven temperatures. ", 12) + "\n",
		"Journal/Risotto.md":         "# Risotto night\n\nCooked risotto for the zebrafinch club.\n",
		"Journal/2026-11-30.md":      "---\naliases: [my private day]\n---\n# Monday\n\nBought a zebrafinch cage for the spare room and baked [[Sourdough bread]].\n",
		"99 topics/Baking.md":        "# Baking\n\n<!-- begin:clippings -->\n- [[Sourdough bread]]\n- [[Starter]]\n- [[2026-11-30]]\n<!-- end:clippings -->\n",
	}
	for path, text := range notes {
		if err := lp.Put(context.Background(), path, text, false); err != nil {
			t.Fatal(err)
		}
	}
	return srv, db
}

// The official openai and MCP TypeScript SDKs against `vaultask serve`:
// every request shape they send is understood and every answer is one they
// parse; the stream's first token reaches the SDK before the upstream model
// has finished; allow_web=true in the SDK's defaultQuery sends no personal
// passage upstream; MCP with allow_web sees no personal note anywhere.
func TestOfficialClients(t *testing.T) {
	srv, db := clientVault(t)
	up := fakellm.New()
	t.Cleanup(up.Close)
	up.FirstToken, up.PerToken = 50*time.Millisecond, 40*time.Millisecond
	up.Reply = func(msgs []fakellm.Message) string {
		last := msgs[len(msgs)-1].Content
		if i := strings.Index(last, `cite="`); i >= 0 {
			cite := last[i+6:]
			return "Knead it for ten minutes, then let it rise overnight in the fridge, as " + cite[:strings.Index(cite, `"`)] + " says."
		}
		return "The vault is silent on this."
	}
	const key = "client-test-key"
	s := startServe(t, append(serveEnv(t, srv, db, up), "VAULTASK_API__KEY="+key))
	waitEmbedded(t, s, key, 7)
	env := []string{"VAULTASK_URL=" + s.url, "VAULTASK_KEY=" + key}

	t.Run("openai", func(t *testing.T) {
		var got struct {
			Start, FirstDeltaAt, StreamEndAt int64
			Text                             string
		}
		const personalQuestion = "when did I first bake the sourdough bread?"
		runClient(t, "openai.test.mjs", append(env, "QUESTION=how long do I knead the sourdough?", "PERSONAL_QUESTION="+personalQuestion), &got)
		// The whole vault's answer was given the personal note; the four
		// asked with allow_web=true in the query (one refused before
		// retrieval) were not.
		var whole, open int
		for _, r := range up.Requests() {
			if !strings.Contains(r.Messages[len(r.Messages)-1].Content, personalQuestion) {
				continue
			}
			if strings.Contains(r.Messages[len(r.Messages)-1].Content, "zebrafinch") {
				whole++
			} else {
				open++
			}
		}
		if whole != 1 || open != 2 {
			t.Errorf("upstream was asked %q with the personal note %d times, without it %d times; want once (the whole vault), twice (?allow_web=true, streamed and not)", personalQuestion, whole, open)
		}
		// The upstream reply that ended while the SDK's stream was open.
		var ends []int64
		for _, f := range up.Finished() {
			if ms := f.UnixMilli(); ms >= got.Start && ms <= got.StreamEndAt {
				ends = append(ends, ms)
			}
		}
		if len(ends) != 1 {
			t.Fatalf("%d upstream replies ended during the SDK's stream, want 1", len(ends))
		}
		upstreamEnd := ends[0]
		if got.FirstDeltaAt == 0 || got.FirstDeltaAt >= upstreamEnd {
			t.Errorf("the SDK's first delta came at %d, the upstream finished at %d: the answer was buffered", got.FirstDeltaAt, upstreamEnd)
		}
		if !citesNote.MatchString(got.Text) {
			t.Errorf("streamed answer = %q", got.Text)
		}
		t.Logf("openai SDK: first delta %d ms after the request, the upstream's last token %d ms after it", got.FirstDeltaAt-got.Start, upstreamEnd-got.Start)
	})
	t.Run("mcp", func(t *testing.T) {
		var got struct{ OK bool }
		runClient(t, "mcp.test.mjs", env, &got)
		if !got.OK {
			t.Fatal("mcp.test.mjs did not finish")
		}
	})
}
