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
)

// conformanceDir holds the official MCP conformance suite and the Node.js
// 22 it runs on (tests/conformance), with their node_modules once
// scripts/setup.sh ran.
var conformanceDir = filepath.Join("..", "..", "tests", "conformance")

// baselineEntry is a line of the suite's expected failures: the scenario
// and, as the last quoted text of its comment, the error it fails with.
var baselineEntry = regexp.MustCompile(`^\s*-\s*(\S+)\s*#.*"([^"]+)"\s*$`)

// resultDir is a scenario's results: server-<scenario>-<time>.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// The official MCP conformance suite, every server scenario, from outside
// against `vaultask serve` on the demo vault, with its own baseline of
// expected failures (tests/conformance/expected-failures.yml): a scenario
// that fails unlisted, or passes listed, fails the suite and this test.
// Each listed scenario must fail with the error its line quotes (a fixture
// the suite expects and vaultask does not have), not for another reason.
func TestMCPConformance(t *testing.T) {
	node := filepath.Join(conformanceDir, "node_modules", ".bin", "node")
	suite := filepath.Join(conformanceDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, f := range []string{node, suite} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("the MCP conformance suite is not installed: run scripts/setup.sh (npm ci in tests/conformance): %v", err)
		}
	}
	baseline, err := filepath.Abs(filepath.Join(conformanceDir, "expected-failures.yml"))
	if err != nil {
		t.Fatal(err)
	}
	expected := map[string]string{}
	for line := range strings.Lines(string(readFile(t, baseline))) {
		if m := baselineEntry.FindStringSubmatch(line); m != nil {
			expected[m[1]] = m[2]
		} else if strings.HasPrefix(strings.TrimSpace(line), "-") {
			t.Fatalf("%s: %q gives no reason: want `- scenario # why: \"the error it fails with\"`", baseline, line)
		}
	}

	s := startServe(t, []string{
		"VAULTASK_VAULT__SOURCE=folder", "VAULTASK_VAULT__PATH=" + filepath.Join("..", "..", "demo", "vault"),
		`VAULTASK_SENSITIVITY__PERSONAL_PATHS=["Journal/**","Tastings/**"]`,
		"VAULTASK_INDEX__PATH=" + filepath.Join(t.TempDir(), "vaultask.db"),
		"VAULTASK_MODELS__BUILTIN_DIR=" + filepath.Join(t.TempDir(), "no-model-here"),
		"VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json",
	})
	var ready map[string]any
	waitUntil(t, 30*time.Second, "/readyz 200", func() bool { return getJSON(t, s.url+"/readyz", &ready) == 200 })

	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--suite", "all", "--url", s.url+"/mcp",
		"--expected-failures", baseline, "--output-dir", out)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		t.Fatalf("the conformance suite against /mcp: %v\n%s", err, output.String())
	}

	dirs, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	passed, failures := 0, map[string][]string{}
	for _, d := range dirs {
		m := resultDir.FindStringSubmatch(d.Name())
		if m == nil {
			t.Fatalf("unexpected result directory %s", d.Name())
		}
		var checks []struct{ Status, ErrorMessage string }
		if err := json.Unmarshal(readFile(t, filepath.Join(out, d.Name(), "checks.json")), &checks); err != nil {
			t.Fatal(err)
		}
		failed := false
		for _, c := range checks {
			if c.Status == "FAILURE" || c.Status == "WARNING" {
				failed = true
				failures[m[1]] = append(failures[m[1]], c.ErrorMessage)
			}
		}
		if !failed {
			passed++
		}
	}
	for scenario, want := range expected {
		if !strings.Contains(strings.Join(failures[scenario], "\n"), want) {
			t.Errorf("%s: failed with %q, want the error the baseline names, %q", scenario, failures[scenario], want)
		}
	}
	if len(dirs) != passed+len(expected) {
		t.Errorf("%d scenarios ran, %d passed, %d expected to fail", len(dirs), passed, len(expected))
	}
	t.Logf("MCP conformance: %d of %d server scenarios pass, %d fail as the baseline expects", passed, len(dirs), len(expected))
}
