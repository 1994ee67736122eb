package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/couchtest"
	"github.com/vaultask/vaultask/tstest/fakellm"
	"github.com/vaultask/vaultask/tstest/livesyncput"
)

// chromium is Debian's package, which scripts/setup.sh installs and
// playwright-core drives.
const chromium = "/usr/bin/chromium"

// hostile is a clipped web page in a note: markup that would run or render
// if /chat treated answer text as HTML.
const hostile = `<img src=x onerror="window.__xss=1;alert(1)"> <script>window.__xss=2;alert(2)</script> [a harmless link](javascript:window.__xss=3;alert(3))`

// inlineHTML is the inline HTML notes use where Markdown has nothing (the
// help vault's "stored for <u>two weeks</u>", its <kbd> keys, <br> in
// tables): /chat renders u, sup, sub, kbd, mark and br as Obsidian does,
// without their attributes, and any other tag, or one left open, as text.
const inlineHTML = `Older versions are stored for <u>two weeks</u>; press <kbd>Ctrl</kbd>+<kbd>S</kbd>, bake at 10<sup>2</sup> °C ` +
	`with H<sub>2</sub>O and <MARK style="background: #FFB86CA6;">a highlight</MARK>,<br>a new line<br />and another. ` +
	`<b>Bold</b> stays text, as does <subpath> and an open <u>tag; <u onclick="window.__xss=4">the attribute</u> is dropped.`

// wineTable is a clipping's Markdown table, as in the demo vault's wine
// notes: /chat shows it as a table, not as a line of pipes.
const wineTable = `| Style | Examples | Serve at |
| --- | --- | --- |
| Light, fresh reds | Beaujolais, Frappato, young Pinot Noir | 12–14 °C |
| Medium-bodied | Chianti Classico, Langhe Nebbiolo, Côtes du Rhône | 14–16 °C |
| Full-bodied, tannic | Barolo, Northern Rhône Syrah, Bordeaux | 16–18 °C |
`

// pagesVault is a small vault for the pages: recipes that answer, a
// personal note, a clipping holding hostile markup, one holding a table,
// and a note whose chunk never arrives (so /admin has one to list).
func pagesVault(t *testing.T) (*couchtest.Server, string, *livesyncput.Client) {
	t.Helper()
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	lp := &livesyncput.Client{DB: srv.DBURL(db), User: srv.User, Password: srv.Password}
	for path, text := range map[string]string{
		"Recipes/Sourdough bread.md": "# Sourdough bread\n\nFeed the starter the night before. Knead the dough for ten minutes, then let it rise overnight in the fridge.\n",
		"Recipes/Risotto.md":         "# Risotto\n\nStir the rice with warm stock, a ladle at a time, for eighteen minutes.\n",
		"Journal/2026-11-30.md":      "# Monday\n\nBought a zebrafinch cage for the spare room and baked sourdough bread.\n",
		"Clippings/Oven guide.md":    "# Oven guide\n\nClipped from a web page about ovens: " + hostile + "\n\n" + inlineHTML + "\n",
		"Clippings/Red wine.md":      "# Serving temperatures for red wine\n\nMost reds are served too warm in a heated flat.\n\n" + wineTable,
	} {
		if err := lp.Put(context.Background(), path, text, false); err != nil {
			t.Fatal(err)
		}
	}
	_, half := livesyncput.Docs("Drafts/Half.md", "a note whose chunk is missing\n", time.Now())
	bulkDocs(t, srv, db, half)
	return srv, db, lp
}

// pagesReply is the fake generation model: it rewrites a follow-up as
// itself, repeats the hostile clipping and its inline HTML when asked
// about ovens, answers
// with a table when asked about wine (aligned columns, code, an escaped
// pipe, citations in cells with the pipe escaped as Obsidian wants and
// not, as models write them, and a cell too wide for a phone), and
// otherwise answers at length with the first passage's citation and one of
// a note that does not exist, so the answer streams for a while.
func pagesReply(msgs []fakellm.Message) string {
	last := msgs[len(msgs)-1].Content
	if _, q, ok := strings.Cut(last, "Last message: "); ok {
		return q
	}
	cite := "[[Recipes/Sourdough bread|Sourdough bread]]"
	if i := strings.Index(last, `cite="`); i >= 0 {
		c := last[i+6:]
		cite = c[:strings.Index(c, `"`)]
	}
	question, _, _ := strings.Cut(strings.TrimPrefix(last, "Question: "), "\n")
	switch {
	case strings.Contains(question, "oven"):
		return "The clipping says: " + hostile + " as " + cite + " has it.\n\n" + inlineHTML
	case strings.Contains(question, "wine"):
		return "Serve reds cooler than a heated room:\n\n" +
			"| Style | Serve at | Source |\n" +
			"| :--- | :---: | ---: |\n" +
			"| Light, fresh reds | `12–14 °C` | " + strings.ReplaceAll(cite, "|", `\|`) + " |\n" +
			"| Full-bodied \\| tannic | **16–18 °C** | " + cite + " |\n" +
			"| Anything_else_with_a_name_too_long_for_a_phone_screen_to_wrap | 14–16 °C | |\n\n" +
			"Err cool: the glass warms the wine."
	case strings.Contains(question, "slowly"):
		return strings.Repeat("Slowly, word by word, the answer keeps coming. ", 20) + cite
	}
	return "Knead the dough for **ten minutes**, then let it rise overnight in the fridge " + cite + ".\n\n" +
		"- Feed the starter the night before.\n- Keep the dough covered while it rises.\n\nA clean bowl helps, as the " +
		"notes say " + cite + "; a baguette is another matter [[Recipes/Baguette|Baguette]]."
}

// pagesRefuse fails the model for a question about passages, so that its
// answer is the extractive one: the retrieved passages, each cited.
func pagesRefuse(msgs []fakellm.Message) bool {
	return strings.Contains(msgs[len(msgs)-1].Content, "Question: Which passages")
}

// /chat and /admin in headless Chromium against `vaultask serve` with the
// test CouchDB and the fake streaming model: tests/clients/chat.test.mjs
// and admin.test.mjs drive the pages as a person would and print what
// they saw; this test checks it, and the overrides file /admin wrote.
// Screenshots go to $VAULTASK_SCREENSHOTS, or the test's temp dir.
func TestPagesInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser")
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("Chromium is not installed at %s: run scripts/setup.sh (Debian's chromium package): %v", chromium, err)
	}
	srv, db, lp := pagesVault(t)
	up := fakellm.New()
	t.Cleanup(up.Close)
	up.FirstToken, up.PerToken = 200*time.Millisecond, 30*time.Millisecond
	up.Reply, up.Refuse = pagesReply, pagesRefuse
	const key, adminKey = "pages-test-key", "pages-admin-key"
	overrides := filepath.Join(t.TempDir(), "overrides.json")
	env := append(serveEnv(t, srv, db, up), "VAULTASK_API__KEY="+key, "VAULTASK_API__ADMIN_KEY="+adminKey,
		"VAULTASK_OVERRIDES_FILE="+overrides, "VAULTASK_API__OBSIDIAN_VAULT=My Notes")
	s := startServe(t, env)
	waitEmbedded(t, s, key, 5)
	// The scripts write a note "on the phone" through this hook.
	edits := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var note struct{ Path, Text string }
		if err := json.NewDecoder(r.Body).Decode(&note); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := lp.Put(r.Context(), note.Path, note.Text, false); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(edits.Close)
	shots := os.Getenv("VAULTASK_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	common := []string{"VAULTASK_URL=" + s.url, "VAULTASK_KEY=" + key, "VAULTASK_ADMIN_KEY=" + adminKey,
		"CHROMIUM=" + chromium, "SCREENSHOTS=" + shots, "EDIT_URL=" + edits.URL}

	t.Run("chat", func(t *testing.T) {
		var got struct {
			OK              bool
			FreshnessMillis int64
			Screenshots     []string
		}
		runClient(t, "chat.test.mjs", common, &got)
		if !got.OK {
			t.Fatal("chat.test.mjs did not finish")
		}
		// Stop aborted the request: the upstream's stream for it was cut
		// (vaultask cancelled it), every other one not refused ended.
		streamed := 0
		for _, r := range up.Requests() {
			if r.Stream && !pagesRefuse(r.Messages) {
				streamed++
			}
		}
		if finished := len(up.Finished()); finished != streamed-1 {
			t.Errorf("%d of %d upstream streams ended, want all but the stopped one", finished, streamed)
		}
		t.Logf("a LiveSync write showed in /chat's freshness indicator after %d ms; screenshots: %v", got.FreshnessMillis, got.Screenshots)
	})
	t.Run("admin", func(t *testing.T) {
		var got struct {
			OK          bool
			Screenshots []string
		}
		runClient(t, "admin.test.mjs", common, &got)
		if !got.OK {
			t.Fatal("admin.test.mjs did not finish")
		}
		info, err := os.Stat(overrides)
		if err != nil {
			t.Fatalf("/admin saved no overrides file: %v", err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("overrides file mode %v, want 0600", info.Mode().Perm())
		}
		var doc map[string]map[string]any
		if err := json.Unmarshal(readFile(t, overrides), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc) != 1 || len(doc["retrieval"]) != 1 || doc["retrieval"]["final_top_k"] != 6.0 {
			t.Errorf("overrides file = %v, want retrieval.final_top_k 6 alone", doc)
		}
		t.Logf("screenshots: %v", got.Screenshots)
	})
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
