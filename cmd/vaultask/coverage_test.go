package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/tstest/corpustext"
	"github.com/vaultask/vaultask/tstest/fakellm"
)

// fakeBrave is the Brave Search API's web endpoint on loopback, as
// rag/web's brave client calls it: it answers every query with one result
// and records the queries.
type fakeBrave struct {
	mu      sync.Mutex
	queries []string
}

func (f *fakeBrave) start(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/res/v1/web/search" || r.Header.Get("X-Subscription-Token") != "brave-test-key" {
			http.Error(w, "unknown endpoint or key", http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		f.queries = append(f.queries, r.URL.Query().Get("q"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "search", "web": map[string]any{"results": []any{
			map[string]any{"title": "What the web says", "url": "https://example.org/answer", "description": "An answer from the web."},
		}}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (f *fakeBrave) searched() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.queries)
}

// coverageAnswer is what /v1 answered and said of the vault's coverage.
type coverageAnswer struct {
	Text     string
	Coverage rag.Coverage
	Verdict  *rag.Verdict
	Silent   bool
	Web      []rag.WebResult
}

// coverageCase is a corpus and three of its questions: one it answers, one
// in the grey band near the line to thin, and one off its topic.
type coverageCase struct {
	name                    string
	dir                     string // the vault, a folder
	personal                string // personal_paths, JSON
	notes                   int    // notes indexed
	covered, grey, offTopic string // the questions
	cites                   string // a note the covered question's passages cite
}

// serveCoverage serves c's vault from its folder with the built-in
// embedder, and the web search and generation model given (none: ""), with
// the environment's extra settings.
func serveCoverage(t *testing.T, c coverageCase, generation, web string, extra ...string) *served {
	t.Helper()
	env := []string{
		"VAULTASK_VAULT__SOURCE=folder", "VAULTASK_VAULT__PATH=" + c.dir,
		"VAULTASK_SENSITIVITY__PERSONAL_PATHS=" + c.personal,
		"VAULTASK_INDEX__PATH=" + filepath.Join(t.TempDir(), "vaultask.db"),
		"VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json",
		"VAULTASK_API__KEY=coverage-key",
	}
	if generation != "" {
		env = append(env, "VAULTASK_MODELS__GENERATION=ollama/fake", "VAULTASK_MODELS__GENERATION_BASE_URL="+generation)
	}
	if web != "" {
		env = append(env, "VAULTASK_WEB__ENABLED=true", "VAULTASK_WEB__PROVIDER=brave", "VAULTASK_WEB__BASE_URL="+web, "VAULTASK_BRAVE_API_KEY=brave-test-key")
	}
	s := startServe(t, append(env, extra...))
	waitEmbedded(t, s, "coverage-key", c.notes, 5*time.Minute)
	return s
}

// demoCoverage is the demo vault with the questions of its README table.
func demoCoverage(t *testing.T) coverageCase {
	t.Helper()
	return coverageCase{name: "demo", dir: filepath.Join("..", "..", "demo", "vault"), personal: `["Journal/**","Tastings/**"]`, notes: 42,
		covered: "At what temperature and for how long do I bake the sourdough?", grey: "Which CPU model is in Pantry?",
		offTopic: "How do I train a puppy to sit?", cites: "[[Recipes/Sourdough bread|Sourdough bread]]"}
}

// Without a generation model the answers are passages: a covered question
// gets its passages, a grey one too (covered, but marked near the line),
// and an off-topic one "The vault is silent on this." and no passage, in
// /v1's vaultask fields and text alike.
func TestServeJudgesCoverageInPassagesMode(t *testing.T) {
	c := demoCoverage(t)
	s := serveCoverage(t, c, "", "")
	covered := askV1(t, s, c.covered, false)
	if covered.Coverage.Outcome != rag.OutcomeCovered || covered.Coverage.Grey || !strings.Contains(covered.Text, c.cites) {
		t.Errorf("covered %q: %+v\n%s", c.covered, covered.Coverage, covered.Text)
	}
	grey := askV1(t, s, c.grey, false)
	if grey.Coverage.Outcome != rag.OutcomeCovered || !grey.Coverage.Grey || grey.Silent {
		t.Errorf("grey %q: %+v", c.grey, grey.Coverage)
	}
	off := askV1(t, s, c.offTopic, false)
	if off.Coverage.Outcome != rag.OutcomeSilent || !off.Silent || strings.TrimSpace(off.Text) != rag.SilentAnswer {
		t.Errorf("off-topic %q: %+v\n%s", c.offTopic, off.Coverage, off.Text)
	}
}

// verdictReply is a generation model that reads the passages it is given:
// it answers from them when they hold want (VERDICT: answered), says the
// vault lacks it otherwise, and answers from the web results when there
// are some, under the web heading.
func verdictReply(want string) func([]fakellm.Message) string {
	return func(msgs []fakellm.Message) string {
		user := msgs[len(msgs)-1].Content
		passages, web, _ := strings.Cut(user, "\nWeb results:")
		var out string
		if strings.Contains(passages, want) {
			out = "VERDICT: answered\n\nFrom the vault, as [[Recipes/Sourdough bread]] says."
		} else {
			out = "VERDICT: not in the vault\n\n" + rag.SilentAnswer
		}
		if web != "" {
			out += "\n\n" + rag.WebHeading + "\n\nThe web has it <https://example.org/answer>."
		}
		return out
	}
}

// With a generation model, its verdict decides the grey band: "not in the
// vault" with allow_web searches the web and answers again, vault and web
// apart; without allow_web it is the silent answer, and the web is never
// searched. A covered question is answered from the vault without the
// web, and an off-topic one, silent by the judgement, searches the web
// first when allowed.
func TestServeGreyBandByTheModelsVerdict(t *testing.T) {
	c := demoCoverage(t)
	up := fakellm.New()
	defer up.Close()
	up.Reply = verdictReply("250 °C")
	brave := &fakeBrave{}
	s := serveCoverage(t, c, up.URL(), brave.start(t))

	calls := func() int { return len(up.Requests()) }
	before := calls()
	grey := askV1(t, s, c.grey, true)
	if grey.Verdict == nil || grey.Verdict.Verdict != rag.VerdictNotInVault || grey.Coverage.Outcome != rag.OutcomeSilent {
		t.Errorf("grey with allow_web: verdict %+v, coverage %+v", grey.Verdict, grey.Coverage)
	}
	if got := brave.searched(); len(got) != 1 || got[0] != c.grey {
		t.Errorf("grey with allow_web: web queries %q, want the question once", got)
	}
	if n := calls() - before; n != 2 || len(grey.Web) != 1 || !strings.Contains(grey.Text, rag.WebHeading) || !strings.Contains(grey.Text, "<https://example.org/answer>") ||
		strings.Contains(grey.Text, "VERDICT") {
		t.Errorf("grey with allow_web: %d generations, web %v, answer:\n%s", n, grey.Web, grey.Text)
	}

	before = calls()
	quiet := askV1(t, s, c.grey, false)
	if quiet.Coverage.Outcome != rag.OutcomeSilent || !quiet.Silent || strings.TrimSpace(quiet.Text) != rag.SilentAnswer || len(brave.searched()) != 1 || calls()-before != 1 {
		t.Errorf("grey without allow_web: %+v, %d web queries, %d generations, answer:\n%s", quiet.Coverage, len(brave.searched()), calls()-before, quiet.Text)
	}

	covered := askV1(t, s, c.covered, true)
	if covered.Verdict == nil || covered.Verdict.Verdict != rag.VerdictAnswered || covered.Coverage.Outcome != rag.OutcomeCovered || len(brave.searched()) != 1 {
		t.Errorf("covered: verdict %+v, coverage %+v, web queries %q", covered.Verdict, covered.Coverage, brave.searched())
	}

	before = calls()
	off := askV1(t, s, c.offTopic, true)
	if got := brave.searched(); len(got) != 2 || got[1] != c.offTopic || calls()-before != 1 || !strings.HasPrefix(strings.TrimSpace(off.Text), rag.SilentAnswer) ||
		!strings.Contains(off.Text, rag.WebHeading) {
		t.Errorf("off-topic with allow_web: web queries %q, %d generations, answer:\n%s", got, calls()-before, off.Text)
	}
	if prompt := up.Requests()[len(up.Requests())-1].Messages; !strings.Contains(prompt[len(prompt)-1].Content, "Vault passages:\n\n(none)") {
		t.Errorf("the model was not told the vault is silent:\n%s", prompt[len(prompt)-1].Content)
	}
}

// A model too small to judge says "partly" of everything, so with its
// verdict every question that allows the web searches it. With
// models.generation_verdict false it is not asked for one: the prompt has
// no verdict rule, the coverage judgement alone decides, so a covered or
// grey question is answered from the vault without the web, and an
// off-topic one is still silent and searches the web.
func TestServeWithoutTheModelsVerdict(t *testing.T) {
	c := demoCoverage(t)
	weak := func(msgs []fakellm.Message) string {
		answer := "Something about it, as [[Recipes/Sourdough bread]] says."
		if strings.Contains(msgs[len(msgs)-1].Content, "\nWeb results:") {
			answer += "\n\n" + rag.WebHeading + "\n\nThe web has it <https://example.org/answer>."
		}
		if strings.Contains(msgs[0].Content, "VERDICT:") {
			return "VERDICT: partly: the rest\n\n" + answer
		}
		return answer
	}
	for _, verdict := range []bool{true, false} {
		t.Run(fmt.Sprintf("generation_verdict=%v", verdict), func(t *testing.T) {
			up := fakellm.New()
			defer up.Close()
			up.Reply = weak
			brave := &fakeBrave{}
			s := serveCoverage(t, c, up.URL(), brave.start(t), fmt.Sprintf("VAULTASK_MODELS__GENERATION_VERDICT=%v", verdict))
			for _, question := range []string{c.covered, c.grey} {
				before := len(brave.searched())
				a := askV1(t, s, question, true)
				searched := len(brave.searched()) > before
				if verdict {
					if a.Verdict == nil || a.Verdict.Verdict != rag.VerdictPartly || !searched {
						t.Errorf("%q with the verdict: verdict %+v, web searched %v; want partly, and the web searched", question, a.Verdict, searched)
					}
					continue
				}
				if a.Verdict != nil || searched || a.Coverage.Outcome != rag.OutcomeCovered || !strings.Contains(a.Text, "Something about it") || strings.Contains(a.Text, "VERDICT") {
					t.Errorf("%q without the verdict: verdict %+v, web searched %v, coverage %+v, answer:\n%s", question, a.Verdict, searched, a.Coverage, a.Text)
				}
			}
			if !verdict {
				for _, r := range up.Requests() {
					if strings.Contains(r.Messages[0].Content, "VERDICT") {
						t.Fatalf("the model was asked for a verdict:\n%s", r.Messages[0].Content)
					}
				}
			}
			before := len(brave.searched())
			off := askV1(t, s, c.offTopic, true)
			if len(brave.searched()) != before+1 || !strings.HasPrefix(strings.TrimSpace(off.Text), rag.SilentAnswer) && !strings.Contains(off.Text, rag.WebHeading) {
				t.Errorf("off-topic: %d web queries, answer:\n%s", len(brave.searched())-before, off.Text)
			}
		})
	}
}

// askV1 asks /v1/chat/completions one question, without streaming, with
// the API key the coverage servers require.
func askV1(t *testing.T, s *served, question string, allowWeb bool) coverageAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "vault-ask", "allow_web": allowWeb,
		"messages": []any{map[string]string{"role": "user", "content": question}}})
	req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer coverage-key")
	req.Header.Set("Content-Type", "application/json")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message struct{ Content string }
		}
		Vaultask struct {
			Coverage rag.Coverage
			Verdict  *rag.Verdict
			Silent   bool
			Web      []rag.WebResult
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || len(out.Choices) != 1 {
		t.Fatalf("%q: status %d, %v", question, resp.StatusCode, err)
	}
	v := out.Vaultask
	return coverageAnswer{Text: out.Choices[0].Message.Content, Coverage: v.Coverage, Verdict: v.Verdict, Silent: v.Silent, Web: v.Web}
}

// corpusSubset writes the notes of a LiveSync corpus dump whose paths have
// one of prefixes into a folder: a part of a real vault, small enough to
// embed in a test.
func corpusSubset(t *testing.T, dump string, prefixes ...string) (dir string, notes int) {
	t.Helper()
	docs, err := corpustext.Read(filepath.Join(corpustext.Require(t), dump))
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	for path, text := range corpustext.Notes(docs) {
		if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(path, p) }) {
			continue
		}
		file := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		notes++
	}
	if notes == 0 {
		t.Fatalf("no note of %s starts with %q", dump, prefixes)
	}
	return dir, notes
}

// On parts of the help and hub vaults, through serve in passages mode: a
// covered question is covered, a grey one covered but marked grey, an
// off-topic one silent.
func TestServeJudgesCoverageOnTheCorpora(t *testing.T) {
	plugins := "02 - Community Expansions/02.05 All Community Expansions/Plugins/"
	helpDir, helpNotes := corpusSubset(t, "help.all_docs.json.gz", "en/Plugins/", "en/Licenses and payment/", "en/Files and folders/")
	hubDir, hubNotes := corpusSubset(t, "hub.all_docs.json.gz", plugins+"sp", plugins+"sy")
	for _, c := range []coverageCase{
		{name: "help", dir: helpDir, personal: "[]", notes: helpNotes,
			covered: "how do I get a new note for today's date each morning for journaling?", cites: "[[en/Plugins/Daily notes|Daily notes]]",
			grey: "Can I set a word count goal for a note and watch my progress towards it?", offTopic: "Which river runs through Budapest?"},
		{name: "hub", dir: hubDir, personal: "[]", notes: hubNotes,
			covered: "insert the track that's currently playing on Spotify into my note", cites: "spotify",
			grey: "is there a plugin for spaced repetition with audio cards?", offTopic: "who won the 2010 football World Cup?"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := serveCoverage(t, c, "", "")
			covered := askV1(t, s, c.covered, false)
			if covered.Coverage.Outcome != rag.OutcomeCovered || covered.Coverage.Grey || !strings.Contains(covered.Text, c.cites) {
				t.Errorf("covered %q: %+v\n%s", c.covered, covered.Coverage, covered.Text)
			}
			grey := askV1(t, s, c.grey, false)
			if grey.Coverage.Outcome != rag.OutcomeCovered || !grey.Coverage.Grey {
				t.Errorf("grey %q: %+v", c.grey, grey.Coverage)
			}
			off := askV1(t, s, c.offTopic, false)
			if off.Coverage.Outcome != rag.OutcomeSilent || strings.TrimSpace(off.Text) != rag.SilentAnswer {
				t.Errorf("off-topic %q: %+v\n%s", c.offTopic, off.Coverage, off.Text)
			}
		})
	}
}
