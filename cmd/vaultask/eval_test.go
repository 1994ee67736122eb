package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/eval"
	"github.com/vaultask/vaultask/tstest/fakellm"
)

// evalVault is a small vault indexed by the real `index --from-dir`. Only
// Kestrel links anywhere (to Falconry), so what graph expansion can reach
// is known.
func evalVault(t *testing.T) (env []string, indexPath string) {
	t.Helper()
	vault := writeVault(t, map[string]string{
		"Birds/Kestrel.md":  "# Kestrel\n\nThe kestrel hovers above meadows before it drops onto a vole. See [[Falconry]].\n",
		"Birds/Falconry.md": "# Falconry\n\nTraining raptors to hunt with a handler takes patience and a glove.\n",
		"Birds/Heron.md":    "# Heron\n\nThe heron wades in shallow water.\n",
		"Fish/Pike.md":      "# Pike\n\nThe pike waits among reeds and ambushes passing roach.\n",
	})
	indexPath = filepath.Join(t.TempDir(), "vaultask.db")
	env = []string{
		"VAULTASK_INDEX__PATH=" + indexPath,
		"VAULTASK_OVERRIDES_FILE=" + filepath.Join(t.TempDir(), "none.json"),
	}
	if out, stderr, err := run(t, env, "index", "--from-dir", vault); err != nil || !strings.Contains(out, "4 added") {
		t.Fatalf("index: %v\n%s\n%s", err, out, stderr)
	}
	return env, indexPath
}

func writeQuestions(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "questions.tsv")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// evalQuestions have known ranks when search is full text only: the first
// question's note is its only match, the second's is reached only by the
// graph from the only match, the third's by nothing.
const evalQuestions = `# comment line
which bird hovers over meadows?	Birds/Kestrel.md
what drops onto a vole?	Birds/Falconry.md|Fish/Nowhere-near.md
how does a pike ambush roach?	Birds/Heron.md
what is a good recipe for sourdough bread?	
`

func TestEvalRetrieval(t *testing.T) {
	env, indexPath := evalVault(t)
	// Paths must exist in the index: a typo would count as a miss.
	if _, _, err := run(t, env, "eval", "retrieval", "--questions", writeQuestions(t, evalQuestions)); err == nil ||
		!strings.Contains(err.Error(), "questions.tsv:3: Fish/Nowhere-near.md is not in the index") {
		t.Fatalf("unknown acceptable path: %v", err)
	}
	questions := writeQuestions(t, strings.Replace(evalQuestions, "|Fish/Nowhere-near.md", "", 1))
	// Full text only, so that ranks do not depend on the embedder; one graph
	// slot and no link text, so that Falconry is reached by the graph alone
	// (Kestrel's words about it would find it directly).
	env = append(env, "VAULTASK_RETRIEVAL__VECTOR_TOP_K=0", "VAULTASK_RETRIEVAL__GRAPH_MAX_SLOTS=1", "VAULTASK_RETRIEVAL__BM25_LINKS=0")

	paths := map[string]string{questions: "$QUESTIONS", indexPath: "$INDEX"}

	out, stderr, err := run(t, env, "eval", "retrieval", "--questions", questions, "--ab", "graph_enabled=false", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	golden(t, "json/stdout", out, paths)
	var rep struct {
		K    int `json:"k"`
		Arms []struct {
			Label, Settings string
		} `json:"arms"`
		Total struct {
			Uncovered int `json:"uncovered_skipped"`
			Arms      []struct {
				RecallAtK float64 `json:"recall_at_k"`
				MRR       float64 `json:"mrr"`
				InContext float64 `json:"in_context"`
			} `json:"arms"`
		} `json:"total"`
		Files []struct {
			Results []struct {
				Line      int    `json:"line"`
				Ranks     []int  `json:"ranks"`
				InContext []bool `json:"in_context"`
			} `json:"results"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if rep.K != 8 || rep.Total.Uncovered != 1 || len(rep.Arms) != 2 || len(rep.Total.Arms) != 2 || rep.Arms[1].Settings != "graph_enabled=false" ||
		!strings.Contains(rep.Arms[0].Settings, "vector_top_k=0") || len(rep.Files) != 1 {
		t.Fatalf("report: %+v", rep)
	}
	var lines [][]int
	for _, r := range rep.Files[0].Results {
		lines = append(lines, append([]int{r.Line}, r.Ranks...))
	}
	// line, rank with the graph (A), rank without (B)
	if diff := cmp.Diff([][]int{{2, 1, 1}, {3, 2, 0}, {4, 0, 0}}, lines); diff != "" {
		t.Fatalf("ranks (-want +got):\n%s", diff)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	a, b := rep.Total.Arms[0], rep.Total.Arms[1]
	if !near(a.RecallAtK, 2.0/3) || !near(a.MRR, (1+0.5)/3) || !near(a.InContext, 2.0/3) {
		t.Errorf("arm A: recall@8 %v, MRR %v, in context %v; want 2/3, 1/2, 2/3", a.RecallAtK, a.MRR, a.InContext)
	}
	if !near(b.RecallAtK, 1.0/3) || !near(b.MRR, 1.0/3) || !near(b.InContext, 1.0/3) {
		t.Errorf("arm B: recall@8 %v, MRR %v, in context %v; want 1/3 each", b.RecallAtK, b.MRR, b.InContext)
	}

	// Text: the arms side by side; --k 1 makes the second question a miss.
	out, _, err = run(t, env, "eval", "retrieval", "--questions", questions, "--k", "1", "--ab", "graph_enabled=false", "--ab", "max_chunks_per_doc=0")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "text/stdout", out, paths)
}

// Several files in one run, each reported with its groups, then the total
// over all of them.
func TestEvalRetrievalGroupsAndFiles(t *testing.T) {
	env, indexPath := evalVault(t)
	env = append(env, "VAULTASK_RETRIEVAL__VECTOR_TOP_K=0", "VAULTASK_RETRIEVAL__GRAPH_MAX_SLOTS=1", "VAULTASK_RETRIEVAL__BM25_LINKS=0")
	birds := writeQuestions(t, `# questions before the first group line form a group of their own
which bird wades in shallow water?	Birds/Heron.md
# group: hover
which bird hovers over meadows?	Birds/Kestrel.md
what drops onto a vole?	Birds/Falconry.md
# group: absent
what is a good recipe for sourdough bread?	
`)
	fish := writeQuestions(t, "how does a pike ambush roach?\tFish/Pike.md\n")
	paths := map[string]string{birds: "$BIRDS", fish: "$FISH", indexPath: "$INDEX"}
	args := []string{"eval", "retrieval", "--questions", birds, "--questions", fish, "--ab", "graph_enabled=false"}

	out, stderr, err := run(t, env, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	golden(t, "text/stdout", out, paths)

	out, _, err = run(t, env, append(args, "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "json/stdout", out, paths)
	type tally struct {
		Covered   int `json:"covered"`
		Uncovered int `json:"uncovered_skipped"`
		Arms      []struct {
			RecallAtK float64 `json:"recall_at_k"`
		} `json:"arms"`
	}
	var rep struct {
		Total tally `json:"total"`
		Files []struct {
			tally
			Groups []struct {
				Group string `json:"group"`
				tally
			} `json:"groups"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(rep.Files) != 2 || rep.Total.Covered != 4 || rep.Total.Uncovered != 1 || rep.Files[0].Covered != 3 || rep.Files[1].Covered != 1 {
		t.Fatalf("files and total: %+v", rep)
	}
	var groups []string
	for _, g := range rep.Files[0].Groups {
		groups = append(groups, fmt.Sprintf("%s %d+%d", g.Group, g.Covered, g.Uncovered))
	}
	if diff := cmp.Diff([]string{" 1+0", "hover 2+0", "absent 0+1"}, groups); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if rep.Files[1].Groups != nil {
		t.Errorf("a file without group lines has groups: %+v", rep.Files[1].Groups)
	}
	// Kestrel is found with and without the graph, Falconry only with it.
	if hover := rep.Files[0].Groups[1].Arms; len(hover) != 2 || hover[0].RecallAtK != 1 || hover[1].RecallAtK != 0.5 {
		t.Errorf("group hover: %+v", hover)
	}
}

func TestEvalArmErrorsNameTheKey(t *testing.T) {
	// Arms are checked before the index is opened.
	env := []string{"VAULTASK_OVERRIDES_FILE=" + filepath.Join(t.TempDir(), "none.json")}
	questions := writeQuestions(t, "which bird hovers?\tBirds/Kestrel.md\n")
	for spec, want := range map[string]string{
		"graph_enabld=false":      `unknown key "retrieval.graph_enabld"`,
		"graph_discount=abc":      `graph_discount="abc": not a number`,
		"graph_discount=1.5":      "retrieval.graph_discount (1.5) must be <= 1",
		"graph_enabled=maybe":     `graph_enabled="maybe": not a boolean`,
		"fusion=best":             `retrieval.fusion "best" must be one of note, chunk`,
		"arms=both":               `arms="both": want fts, vector or hybrid`,
		"graph_max_slots":         "want key=value",
		"fts_top_k=1,fts_top_k=2": "fts_top_k given twice",
		"arms=fts,fts_top_k=10":   "retrieval.vector_top_k + retrieval.fts_top_k",
	} {
		_, _, err := run(t, env, "eval", "retrieval", "--questions", questions, "--ab", spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--ab %s: got %v, want an error with %q", spec, err, want)
		}
	}
}

func TestEvalQuestionsFileErrors(t *testing.T) {
	env := []string{"VAULTASK_OVERRIDES_FILE=" + filepath.Join(t.TempDir(), "none.json")}
	for text, want := range map[string]string{
		"# header\nfine?\tA.md\nno tab here\n": "questions.tsv:3: no TAB",
		"a?\tA.md\tB.md\n":                     "questions.tsv:1: more than one TAB",
		"\n\t A.md\n":                          "questions.tsv:2: empty question",
		"a?\tA.md||B.md\n":                     "questions.tsv:1: empty path",
		"# only comments\n":                    "no questions",
	} {
		_, _, err := run(t, env, "eval", "retrieval", "--questions", writeQuestions(t, text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error with %q", text, err, want)
		}
	}
}

func TestEvalUsage(t *testing.T) {
	env := []string{"VAULTASK_OVERRIDES_FILE=" + filepath.Join(t.TempDir(), "none.json")}
	_, stderr, err := run(t, env, "eval")
	if !errors.Is(err, errUsage) {
		t.Fatalf("eval alone: %v\n%s", err, stderr)
	}
	golden(t, "eval/stderr", stderr, nil)
	if _, _, err := run(t, env, "eval", "precision"); err == nil || !strings.Contains(err.Error(), `"precision"`) {
		t.Fatalf("unknown evaluation: %v", err)
	}
	if _, _, err := run(t, env, "eval", "retrieval"); err == nil || !strings.Contains(err.Error(), "--questions") {
		t.Fatalf("no --questions: %v", err)
	}
	if _, _, err := run(t, env, "eval", "retrieval", "--questions", "q.tsv", "--k", "0"); err == nil || !strings.Contains(err.Error(), "--k 0") {
		t.Fatalf("--k 0: %v", err)
	}
	_, stderr, err = run(t, env, "eval", "web-trigger", "--help")
	if err != nil {
		t.Fatalf("web-trigger --help: %v\n%s", err, stderr)
	}
	golden(t, "web-trigger-help/stderr", stderr, nil)
	_, stderr, err = run(t, env, "eval", "retrieval", "--help")
	if err != nil {
		t.Fatalf("retrieval --help: %v\n%s", err, stderr)
	}
	golden(t, "retrieval-help/stderr", stderr, nil)
}

// eval web-trigger judges each question with the configured coverage fit
// and counts the outcomes per kind: the kestrel question, which a note
// answers, is covered; an off-topic one is not. --json says the same as
// data, --features writes what the fit reads.
func TestEvalWebTrigger(t *testing.T) {
	env, indexPath := evalVault(t)
	questions := writeQuestions(t, "# group: direct\nwhich bird hovers over meadows?\tBirds/Kestrel.md\n# group: offtopic\nhow do I file an income tax return in Germany?\t\n")
	out, stderr, err := run(t, env, "eval", "web-trigger", "--questions", questions)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	golden(t, "stdout", out, map[string]string{questions: "$QUESTIONS", indexPath: "$INDEX"})
	out, stderr, err = run(t, env, "eval", "web-trigger", "--questions", questions, "--json")
	if err != nil {
		t.Fatalf("--json: %v\n%s", err, stderr)
	}
	var rep eval.WebTriggerReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(rep.Files) != 1 || rep.Scope != "all" || rep.Files[0].Covered.Covered != 1 || rep.Files[0].Uncovered.Right() != 1 {
		t.Fatalf("--json: %+v", rep)
	}
	out, stderr, err = run(t, env, "eval", "web-trigger", "--questions", questions, "--features", "--allow-web")
	if err != nil {
		t.Fatalf("--features: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var row eval.FeatureRow
	if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &row) != nil || row.Covered || row.Group != "offtopic" || row.Features["absent"] == 0 {
		t.Fatalf("--features:\n%s", out)
	}
	if _, _, err := run(t, env, "eval", "web-trigger", "--questions", questions, "--features", "--json"); err == nil || !strings.Contains(err.Error(), "choose one") {
		t.Fatalf("--features with --json: %v", err)
	}
}

// A rerank arm reranks with its own model: on the fake model, which scores
// the kestrel's passage 10 and every other 0, the kestrel rises from behind
// the heron to first, in the ranking and in the final context, while arm A
// keeps the fused order. The fake model saw the rerank prompt.
func TestEvalRetrievalRerankArm(t *testing.T) {
	env, _ := evalVault(t)
	env = append(env, "VAULTASK_RETRIEVAL__VECTOR_TOP_K=0")
	fake := fakellm.New()
	defer fake.Close()
	fake.Reply = func(msgs []fakellm.Message) string {
		var scores []string
		for line := range strings.Lines(msgs[len(msgs)-1].Content) {
			if strings.HasPrefix(line, "[") {
				score := "0"
				if strings.Contains(line, "Kestrel") {
					score = "10"
				}
				scores = append(scores, score)
			}
		}
		return "[" + strings.Join(scores, ", ") + "]"
	}
	questions := writeQuestions(t, "which bird hovers over meadows, or wades?\tBirds/Kestrel.md\n")
	out, stderr, err := run(t, env, "eval", "retrieval", "--questions", questions, "--ab", "models.rerank=ollama/fake-reranker",
		"--rerank-url", fake.URL(), "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var rep struct {
		Files []struct {
			Results []struct {
				Ranks     []int  `json:"ranks"`
				InContext []bool `json:"in_context"`
			} `json:"results"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Files[0].Results[0]
	if r.Ranks[0] != 2 || r.Ranks[1] != 1 || !r.InContext[1] {
		t.Errorf("ranks without and with rerank = %v, in context %v; want [2 1], the reranked kestrel in context", r.Ranks, r.InContext)
	}
	reqs := fake.Requests()
	if len(reqs) == 0 || reqs[0].Model != "fake-reranker" || !strings.Contains(reqs[0].Messages[0].Content, "relevance score") {
		t.Errorf("rerank requests: %+v", reqs)
	}
	// A rerank model that cannot be had fails the arm rather than measure
	// the fused order under its name.
	if _, _, err := run(t, env, "eval", "retrieval", "--questions", questions, "--ab", "models.rerank=openrouter/some/model"); err == nil ||
		!strings.Contains(err.Error(), "rerank model") {
		t.Errorf("rerank arm without a key: %v", err)
	}
}

// A cross-encoder arm reranks through llama-server's /v1/rerank, here the
// loopback fake that scores by word overlap: the kestrel's passage shares
// the most words with the question and rises from behind the heron, in
// batches of models.rerank_batch. What this measures is the plumbing and
// the cost, not a model's judgement.
func TestEvalRetrievalCrossEncoderArm(t *testing.T) {
	env, _ := evalVault(t)
	env = append(env, "VAULTASK_RETRIEVAL__VECTOR_TOP_K=0")
	fake := fakellm.New()
	defer fake.Close()
	questions := writeQuestions(t, "which bird hovers over meadows, or wades?\tBirds/Kestrel.md\n")
	out, stderr, err := run(t, env, "eval", "retrieval", "--questions", questions,
		"--ab", "models.rerank=llamacpp/bge-reranker-v2-m3,models.rerank_kind=cross-encoder,models.rerank_batch=1",
		"--rerank-url", fake.URL(), "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var rep struct {
		Files []struct {
			Results []struct {
				Ranks []int `json:"ranks"`
			} `json:"results"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if r := rep.Files[0].Results[0]; r.Ranks[0] != 2 || r.Ranks[1] != 1 {
		t.Errorf("ranks without and with rerank = %v, want [2 1]", r.Ranks)
	}
	reqs := fake.RerankRequests()
	if len(reqs) == 0 || len(fake.Requests()) != 0 {
		t.Fatalf("%d rerank and %d chat requests; want rerank requests only", len(reqs), len(fake.Requests()))
	}
	for _, r := range reqs {
		if len(r.Documents) != 1 || r.Model != "bge-reranker-v2-m3" {
			t.Errorf("request: %+v", r)
		}
	}
}
