package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/syncbuf"
)

// ask asks the demo a question through the OpenAI endpoint and returns the
// answer and the paths it cites.
func ask(t *testing.T, base, question string) (string, []string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "vault-ask", "messages": []any{map[string]string{"role": "user", "content": question}}})
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Vaultask struct {
			Citations []struct {
				Path     string `json:"path"`
				Verified bool   `json:"verified"`
			} `json:"citations"`
		} `json:"vaultask"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || len(out.Choices) != 1 {
		t.Fatalf("%q: %d %v", question, resp.StatusCode, err)
	}
	var paths []string
	for _, c := range out.Vaultask.Citations {
		if c.Verified {
			paths = append(paths, c.Path)
		}
	}
	return out.Choices[0].Message.Content, paths
}

var (
	bannerChat = regexp.MustCompile(`Chat\s+(http://\S+)/chat`)
	bannerPids = regexp.MustCompile(`vaultask serve \(pid (\d+)\) and the test CouchDB \(pid (\d+)\)`)
	bannerPut  = regexp.MustCompile(`(?s)\n  (bin/vaultask-dev put [^\n]*\n[^\n]*")\n`)
)

// The README's first command, as a newcomer runs it: scripts/demo.sh sets
// up, loads the demo vault into a test CouchDB in LiveSync's format and
// serves it; a question through the OpenAI endpoint is answered with a
// citation; the edit command the demo prints is answered at once; SIGINT
// stops it and every process it started.
func TestDemoScript(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo builds vaultask and embeds the demo vault")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "scripts/demo.sh", "-listen", "127.0.0.1:0", "-couch-port", "0", "-dir", t.TempDir())
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "VAULTASK_OPENROUTER_API_KEY=", "VAULTASK_OPENAI_API_KEY=")
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// Read the banner, up to its last line.
	var banner strings.Builder
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for !bannerPids.MatchString(banner.String()) {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the demo stopped before it was ready: %v\n%s\n%s", <-exited, banner.String(), stderr.String())
			}
			banner.WriteString(line + "\n")
		case <-ctx.Done():
			t.Fatalf("the demo was not ready in time\n%s\n%s", banner.String(), stderr.String())
		}
	}
	go func() { // the rest of its output, so it never blocks on a full pipe
		for range lines {
		}
	}()
	t.Logf("demo ready %v after the command started (setup and builds included)", time.Since(began).Round(time.Millisecond))
	text := banner.String()
	base := bannerChat.FindStringSubmatch(text)[1]
	pids := bannerPids.FindStringSubmatch(text)
	put := bannerPut.FindStringSubmatch(text)
	if put == nil {
		t.Fatalf("the banner shows no edit command:\n%s", text)
	}
	for _, want := range []string{"/v1", "/mcp", "claude mcp add --transport http vaultask " + base + "/mcp", "notes and", "1 note waits for its missing chunks"} {
		if !strings.Contains(text, want) {
			t.Errorf("the banner lacks %q:\n%s", want, text)
		}
	}

	// A question about the demo vault, answered with a citation.
	answer, cited := ask(t, base, "At what temperature and for how long do I bake the sourdough?")
	if !strings.Contains(strings.Join(cited, " "), "Recipes/Sourdough bread.md") || !strings.Contains(answer, "[[Recipes/Sourdough bread") {
		t.Errorf("the sourdough answer cites %v:\n%s", cited, answer)
	}

	// The edit command, exactly as printed, then the new text answered.
	edit := exec.CommandContext(ctx, "bash", "-c", put[1])
	edit.Dir = root
	if out, err := edit.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", put[1], err, out)
	}
	edited := time.Now()
	var answered bool
	for !answered && time.Since(edited) < 10*time.Second {
		answer, cited = ask(t, base, "How do I make focaccia?")
		answered = strings.Contains(strings.Join(cited, " "), "Recipes/Focaccia.md") && strings.Contains(answer, "oiled fingers")
		if !answered {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if !answered {
		t.Fatalf("the edited note was not answered within 10s:\n%s", answer)
	}
	t.Logf("the printed edit command to an answer citing the note: %v", time.Since(edited).Round(time.Millisecond))

	// SIGINT stops the demo, and with it every process it started.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the demo after SIGINT: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not stop within 30s of SIGINT")
	}
	for _, p := range pids[1:] {
		pid, _ := strconv.Atoi(p)
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d is still running after the demo stopped (%v)", pid, err)
		}
	}
}
