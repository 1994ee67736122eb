package markdown

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vaultask/vaultask/vault"
)

// ordinaryNotes are notes as people write them, markdown to the parser.
var ordinaryNotes = []string{
	"",
	"---\ntitle: T\ntags: [a, b]\naliases: x, y\n---\n# H\n\ntext [[Link#Head|alias]] ![[Embed.png]] #tag\n",
	"---\r\nbad: [yaml\r\n---\r\n\ufeffbody\r\n",
	"---\nsensitivity: [personal]\nSensitivity: open\n---\nx",
	"---\nsensitivity: open\nbad: : :\n---\nx",
	"---\nsensitivity: personal\ntitle: T\n\nno closing line",
	"---\r\n'Sensitivity' : personal\r\n... \r\nclosed with dots\r\nsensitivity: open\r\n",
	"\n---\nsensitivity: personal\n---\nafter a blank line",
	" ---\nsensitivity: personal\n ---\nindented",
	"----\nSensitivity: personal\n-----\nlonger fences",
	"---\ntitle: T\n  ---  \nsensitivity: personal\n",
	"## A\n```\n[[no]] #no\n## no\n```\n### B\n- [[x\\|y]] `[[no]]` [m](M%20N.md#^b)\n",
	"<!-- begin:clippings -->\n[[Clip]]\n<!-- end:clippings -->\n[[After]]",
	"[[a [[b]] [[#]] [[|x]] ![[ ]] #123 #a/b/ http://x/#y [t](#h) (#p)",
	"Top\n===\n\n    indented [[code]]\n\n> ## quoted\n\n" + strings.Repeat("Sentence one. ", 40),
	"``` unclosed\n" + strings.Repeat("x", 300),
	strings.Repeat("日本語のテキスト。", 60),
}

var fuzzSeeds = slices.Concat(ordinaryNotes, hostileSeeds())

// ignoredReason is how every Note.SensitivityIgnored starts: with the ways
// the block misses being frontmatter.
var ignoredReason = regexp.MustCompile(`^frontmatter (starts after a blank line|opens with|has no closing|is closed with|closes with)`)

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, src []byte, topic bool) {
		path := "Notes/n.md"
		if topic {
			path = TopicFolder + "n.md"
		}
		n := Parse(path, src, "sensitivity")
		if strings.Contains(n.Body, "\r") {
			t.Errorf("Body keeps a carriage return: %q", n.Body)
		}
		for _, l := range n.Links {
			if l.Target == "" && l.Heading == "" && l.Block == "" {
				t.Errorf("link names nothing: %+v", l)
			}
			if l.Kind != KindWikilink && (l.Kind != KindTopic || !topic) {
				t.Errorf("link kind %q in %s: %+v", l.Kind, path, l)
			}
			if utf8.Valid(src) && !utf8.ValidString(l.Context) {
				t.Errorf("link context is not UTF-8: %q", l.Context)
			}
			if strings.Contains(l.Context, "\n") || !strings.Contains(n.Body, strings.Fields(l.Context + " x")[0]) {
				t.Errorf("link context %q is not from one line of the body", l.Context)
			}
		}
		seen := map[string]bool{}
		for _, tag := range n.Tags {
			if norm, ok := normalizeTag(tag); !ok || norm != tag {
				t.Errorf("tag %q is not normalised", tag)
			}
			if seen[strings.ToLower(tag)] {
				t.Errorf("tag %q repeated", tag)
			}
			seen[strings.ToLower(tag)] = true
		}
		if n.Sensitivity != "" && n.Sensitivity != vault.SensitivityOpen && n.Sensitivity != vault.SensitivityPersonal {
			t.Errorf("Sensitivity = %q", n.Sensitivity)
		}
		if n.SensitivityProblem != "" && n.Sensitivity != vault.SensitivityPersonal {
			t.Errorf("Sensitivity = %q with the problem %q, want personal", n.Sensitivity, n.SensitivityProblem)
		}
		if n.SensitivityIgnored != "" && (n.Sensitivity != "" || n.Frontmatter != nil || n.Body != normalizeText(src)) {
			t.Errorf("an ignored override (%s) with Sensitivity %q, frontmatter %v, or a body that is not the whole text", n.SensitivityIgnored, n.Sensitivity, n.Frontmatter)
		}
		if n.SensitivityIgnored != "" && !ignoredReason.MatchString(n.SensitivityIgnored) {
			t.Errorf("an ignored override that says no miss: %s", n.SensitivityIgnored)
		}
		if value, problem, ignored := Sensitivity(src, "sensitivity"); value != n.Sensitivity || problem != n.SensitivityProblem || ignored != n.SensitivityIgnored {
			t.Errorf("Sensitivity = %q, %q, %q; Parse found %q, %q, %q", value, problem, ignored, n.Sensitivity, n.SensitivityProblem, n.SensitivityIgnored)
		}
		chunks := checkNoteChunks(t, n, small)
		checkChunks(t, n.Body, small, chunks)
		for _, c := range chunks {
			if n.PlainText != "" && c.HeadingPath != "" {
				t.Errorf("plain text (%s) has a heading path %q", n.PlainText, c.HeadingPath)
			}
		}
	})
}

func FuzzChunkBody(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, uint8(0), uint8(0), uint8(0))
		f.Add(s, uint8(20), uint8(5), uint8(40))
		f.Add(s, uint8(3), uint8(1), uint8(2))
	}
	f.Fuzz(func(t *testing.T, body string, target, minimum, maximum uint8) {
		opts := ChunkOptions{TargetTokens: int(target), MinTokens: int(minimum), MaxTokens: int(maximum)}
		checkChunks(t, body, opts, ChunkBody(body, opts))
		// What a costly body gets, whatever the body.
		checkChunks(t, body, opts, plainMarkup(body).chunks(opts))
	})
}
