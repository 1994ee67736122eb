package markdown

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/vault"
)

func TestParseFrontmatter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		path        string
		src         string
		frontmatter map[string]any
		body        string
		title       string
		aliases     []string
		sensitivity string
	}{
		{
			name:  "none",
			path:  "Folder/My Note.md",
			src:   "# Heading\n\ntext\n",
			body:  "# Heading\n\ntext\n",
			title: "My Note",
		},
		{
			name:        "title and alias list",
			path:        "n.md",
			src:         "---\ntitle: Real Title\naliases:\n  - One\n  - ' Two '\n  - One\n  - 2024\n---\nbody\n",
			frontmatter: map[string]any{"title": "Real Title", "aliases": []any{"One", " Two ", "One", 2024}},
			body:        "body\n",
			title:       "Real Title",
			aliases:     []string{"One", "Two", "2024"},
		},
		{
			name:        "alias string is a comma list, alias key too",
			path:        "n.md",
			src:         "---\naliases: Smith, John\nalias: Jo\n---\n",
			frontmatter: map[string]any{"aliases": "Smith, John", "alias": "Jo"},
			title:       "n",
			aliases:     []string{"Smith", "John", "Jo"},
		},
		{
			name:        "alias number",
			path:        "n.md",
			src:         "---\naliases: 42\n---\n",
			frontmatter: map[string]any{"aliases": 42},
			title:       "n",
			aliases:     []string{"42"},
		},
		{
			name:        "non-string title falls back to the file name",
			path:        "2024-01-05.MD",
			src:         "---\ntitle: [a, b]\n---\ntext",
			frontmatter: map[string]any{"title": []any{"a", "b"}},
			body:        "text",
			title:       "2024-01-05",
		},
		{
			name:        "blank title falls back",
			path:        `Windows\Path\Note.md`,
			src:         "---\ntitle: '  '\n---\n",
			frontmatter: map[string]any{"title": "  "},
			title:       "Note",
		},
		{
			name:        "sensitivity personal, case and spaces folded",
			path:        "n.md",
			src:         "---\nvisibility: ' Personal '\n---\nx",
			frontmatter: map[string]any{"visibility": " Personal "},
			body:        "x",
			title:       "n",
			sensitivity: "personal",
		},
		{
			name:        "sensitivity open",
			path:        "n.md",
			src:         "---\nvisibility: OPEN\n---\nx",
			frontmatter: map[string]any{"visibility": "OPEN"},
			body:        "x",
			title:       "n",
			sensitivity: "open",
		},
		{
			name:        "sensitivity other value is personal",
			path:        "n.md",
			src:         "---\nvisibility: secret\n---\nx",
			frontmatter: map[string]any{"visibility": "secret"},
			body:        "x",
			title:       "n",
			sensitivity: "personal",
		},
		{
			name:        "sensitivity non-string is personal",
			path:        "n.md",
			src:         "---\nvisibility: [open]\n---\nx",
			frontmatter: map[string]any{"visibility": []any{"open"}},
			body:        "x",
			title:       "n",
			sensitivity: "personal",
		},
		{
			name:        "sensitivity under another key ignored",
			path:        "n.md",
			src:         "---\nprivacy: open\n---\nx",
			frontmatter: map[string]any{"privacy": "open"},
			body:        "x",
			title:       "n",
		},
		{
			name:  "malformed yaml: no frontmatter, block still not body",
			path:  "n.md",
			src:   "---\ntitle: [unclosed\nkey: : :\n---\nbody",
			body:  "body",
			title: "n",
		},
		{
			name:  "yaml that is not a mapping",
			path:  "n.md",
			src:   "---\n- a\n- b\n---\nbody",
			body:  "body",
			title: "n",
		},
		{
			name:  "empty block",
			path:  "n.md",
			src:   "---\n---\nbody",
			body:  "body",
			title: "n",
		},
		{
			name:  "no closing delimiter: all body",
			path:  "n.md",
			src:   "---\ntitle: X\n\ntext",
			body:  "---\ntitle: X\n\ntext",
			title: "n",
		},
		{
			name:  "opening delimiter not on the first line",
			path:  "n.md",
			src:   "\n---\ntitle: X\n---\n",
			body:  "\n---\ntitle: X\n---\n",
			title: "n",
		},
		{
			name:        "CRLF line endings and trailing spaces on delimiters",
			path:        "n.md",
			src:         "--- \r\ntitle: Win\r\n---\t\r\nline one\r\nline two\rold mac\r\n",
			frontmatter: map[string]any{"title": "Win"},
			body:        "line one\nline two\nold mac\n",
			title:       "Win",
		},
		{
			name:        "byte-order mark",
			path:        "n.md",
			src:         "\ufeff---\ntitle: Bom\n---\nx",
			frontmatter: map[string]any{"title": "Bom"},
			body:        "x",
			title:       "Bom",
		},
		{
			name:        "closing delimiter at end of file",
			path:        "n.md",
			src:         "---\ntitle: End\n---",
			frontmatter: map[string]any{"title": "End"},
			title:       "End",
		},
		{
			name: "empty path and no title",
			src:  "x",
			body: "x",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Parse(tt.path, []byte(tt.src), "visibility")
			checkMarkdown(t, n)
			if diff := cmp.Diff(tt.frontmatter, n.Frontmatter); diff != "" {
				t.Errorf("Frontmatter (-want +got):\n%s", diff)
			}
			if n.Body != tt.body {
				t.Errorf("Body = %q, want %q", n.Body, tt.body)
			}
			if n.Title != tt.title {
				t.Errorf("Title = %q, want %q", n.Title, tt.title)
			}
			if diff := cmp.Diff(tt.aliases, n.Aliases); diff != "" {
				t.Errorf("Aliases (-want +got):\n%s", diff)
			}
			if n.Sensitivity != tt.sensitivity {
				t.Errorf("Sensitivity = %q, want %q", n.Sensitivity, tt.sensitivity)
			}
		})
	}
}

func TestParseSensitivity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		src         string
		sensitivity string
		problem     string // a part of SensitivityProblem, "" for none
	}{
		{"personal", "---\nsensitivity: personal\n---\nx", "personal", ""},
		{"open", "---\nsensitivity: open\n---\nx", "open", ""},
		{"value case and spaces", "---\nsensitivity: ' Personal '\n---\nx", "personal", ""},
		{"upper-case value", "---\nsensitivity: OPEN\n---\nx", "open", ""},
		{"CRLF line endings", "---\r\nsensitivity: personal\r\n---\r\nx\r\n", "personal", ""},
		{"byte-order mark", "\ufeff---\nsensitivity: open\n---\nx", "open", ""},
		{"quoted key", "---\n\"sensitivity\": open\n---\nx", "open", ""},

		{"no frontmatter", "# Title\n\nsensitivity: personal\n", "", ""},
		{"frontmatter without the key", "---\ntitle: T\n---\nx", "", ""},
		{"empty frontmatter", "---\n---\nx", "", ""},
		{"no closing delimiter", "---\nsensitivity: personal\n\nx", "", ""},
		{"invalid YAML without the key", "---\ntitle: [unclosed\n---\nx", "", ""},
		{"invalid YAML with the key inside another word", "---\ntitle: [unclosed\nhypersensitivity: open\n---\nx", "", ""},

		{"invalid YAML mentioning the key", "---\ntitle: [unclosed\nsensitivity: open\n---\nx", "personal", "YAML is not valid"},
		{"invalid YAML mentioning the key in another case", "---\nSensitivity : open\ntitle: [unclosed\n---\nx", "personal", "YAML is not valid"},
		{"invalid YAML mentioning the quoted key", "---\n'sensitivity': open\nbad: : :\n---\nx", "personal", "YAML is not valid"},
		{"not a mapping, mentioning the key", "---\n- sensitivity: personal\n---\nx", "personal", "YAML is not valid"},
		{"key given twice", "---\nsensitivity: open\nsensitivity: open\n---\nx", "personal", `mapping key "sensitivity" already defined`},
		{"a list", "---\nsensitivity: [personal]\n---\nx", "personal", "not a string"},
		{"a boolean", "---\nsensitivity: true\n---\nx", "personal", "not a string"},
		{"a number", "---\nsensitivity: 3\n---\nx", "personal", "not a string"},
		{"a mapping", "---\nsensitivity:\n  level: open\n---\nx", "personal", "not a string"},
		{"a date", "---\nsensitivity: 2024-01-01\n---\nx", "personal", "not a string"},
		{"empty", "---\nsensitivity:\n---\nx", "personal", "no value"},
		{"null", "---\nsensitivity: null\n---\nx", "personal", "no value"},
		{"other word", "---\nsensitivity: secret\n---\nx", "personal", `"secret"`},
		{"private", "---\nsensitivity: private\n---\nx", "personal", `"private"`},
		{"almost personal", "---\nsensitivity: Personal-ish\n---\nx", "personal", `"Personal-ish"`},
		{"empty string", "---\nsensitivity: ''\n---\nx", "personal", `""`},
		{"key capitalised", "---\nSensitivity: open\n---\nx", "personal", `"Sensitivity"`},
		{"key upper-case", "---\nSENSITIVITY: personal\n---\nx", "personal", `"SENSITIVITY"`},
		{"key also in another case", "---\nsensitivity: open\nSensitivity: open\n---\nx", "personal", `"Sensitivity"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Parse("n.md", []byte(tt.src), "sensitivity")
			if n.Sensitivity != tt.sensitivity {
				t.Errorf("Sensitivity = %q, want %q", n.Sensitivity, tt.sensitivity)
			}
			switch {
			case tt.problem == "" && n.SensitivityProblem != "":
				t.Errorf("SensitivityProblem = %q, want none", n.SensitivityProblem)
			case tt.problem != "" && !strings.Contains(n.SensitivityProblem, tt.problem):
				t.Errorf("SensitivityProblem = %q, want one holding %q", n.SensitivityProblem, tt.problem)
			}
		})
	}
}

func TestParseSensitivityKeyEmpty(t *testing.T) {
	t.Parallel()
	n := Parse("n.md", []byte("---\n\"\": open\n---\n"), "")
	if n.Sensitivity != "" {
		t.Errorf("Sensitivity = %q with no key, want \"\"", n.Sensitivity)
	}
}

func TestParseTags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"frontmatter list", "---\ntags: [a, '#b', c/d, 123, 1.5]\n---\n", []string{"a", "b", "c/d", "1.5"}},
		{"frontmatter string, commas and spaces", "---\ntags: '#a, b  #c'\n---\n", []string{"a", "b", "c"}},
		{"frontmatter tag key", "---\ntag: solo\n---\n", []string{"solo"}},
		{"frontmatter then inline, deduplicated without case", "---\ntags: [Project]\n---\nsee #project and #other #Other\n", []string{"Project", "other"}},
		{"inline at start and after punctuation", "#first, then (#second) *#third* [#fourth] |#fifth|", []string{"first", "second", "third", "fourth", "fifth"}},
		{"nested and unicode", "#area/sub-topic #café #日本語 #x_y", []string{"area/sub-topic", "café", "日本語", "x_y"}},
		{"ends at punctuation", "done #tag. also #two, and #three!", []string{"tag", "two", "three"}},
		{"trailing slash dropped", "#a/ #/", []string{"a"}},
		{"numeric", "#123 #2024 #1a #a1", []string{"1a", "a1"}},
		{"headings are not tags", "# Title\n\n## Section\n\n###### deep #real\n", []string{"real"}},
		{"not inside words or entities", "a#b c&#39;s issue#5", nil},
		{"escaped", `\#notag`, nil},
		{"fenced code", "```\n#notag\n```\n\n~~~bash #info\n#x\n~~~\n", nil},
		{"indented code", "para\n\n    #notag\n", nil},
		{"inline code", "use `#notag` or ``a #b``", nil},
		{"urls", "http://x.com/#frag https://y/page#sec (see https://z/?a=1&b=#c) <http://q/#r>", nil},
		{"markdown link fragment", "[text](#heading) [t](<#h>) [t](other.md#h)", nil},
		{"wikilink heading", "[[Note#heading]] [[#self]] ![[Img#x]]", nil},
		{"tag after a wikilink", "[[Note]] #after", []string{"after"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Parse("n.md", []byte(tt.src), "")
			checkMarkdown(t, n)
			if diff := cmp.Diff(tt.want, n.Tags); diff != "" {
				t.Errorf("Tags of %q (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

// Sensitivity reads the override from the frontmatter alone, exactly as
// Parse does.
func TestSensitivityMatchesParse(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"", "no frontmatter", "---\nsensitivity: personal\n---\nx", "\ufeff---\r\nsensitivity: OPEN\r\n---\r\n",
		"---\nSensitivity: open\n---\n", "---\nsensitivity: [personal]\n---\n", "---\nbad: [yaml\nsensitivity: open\n---\n",
		"---\nvisibility: personal\n---\n", "---\nsensitivity: secret\n---\nbody",
		"\n---\nsensitivity: personal\n---\n", "----\nvisibility: personal\n----\n",
	} {
		for _, key := range []string{"sensitivity", "visibility", ""} {
			n := Parse("n.md", []byte(src), key)
			v, p, i := Sensitivity([]byte(src), key)
			if v != n.Sensitivity || p != n.SensitivityProblem || i != n.SensitivityIgnored {
				t.Errorf("Sensitivity(%q, %q) = %q, %q, %q; Parse says %q, %q, %q", src, key, v, p, i, n.Sensitivity, n.SensitivityProblem, n.SensitivityIgnored)
			}
		}
	}
}

// A block that opens or closes as Obsidian does not read frontmatter is
// text, so its override does nothing, and SensitivityIgnored says how it
// misses: never closed, closed with '...', after a blank line, with an
// indented or a longer dash line.
func TestParseIgnoredFrontmatterOverride(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		src     string
		ignored string // a part of SensitivityIgnored, "" for none
	}{
		{"no closing line", "---\nsensitivity: personal\n\nbody", "no closing '---' line"},
		{"closed with dots", "---\nsensitivity: personal\n...\nbody", "closed with '...'"},
		{"dots with trailing spaces", "---\ntitle: T\n'Sensitivity' : personal\n... \t\nbody", "closed with '...'"},
		{"CRLF line endings", "---\r\nsensitivity: personal\r\n...\r\nbody", "closed with '...'"},
		{"indented key", "---\n  sensitivity: personal\n", "no closing '---' line"},
		{"after a blank line", "\n---\nsensitivity: personal\n---\nbody", "frontmatter starts after a blank line, so"},
		{"after blank lines with spaces", " \n\t\n---\nsensitivity: personal\n---\nbody", "frontmatter starts after a blank line, so"},
		{"indented opening", " ---\nsensitivity: personal\n---\nbody", `frontmatter opens with an indented " ---", so`},
		{"indented closing", "---\nsensitivity: personal\n  ---\nbody", `frontmatter closes with an indented "  ---", so`},
		{"four-dash fences", "----\nsensitivity: personal\n----\nbody", `frontmatter opens with "----" instead of '---' and closes with "----" instead of '---', so`},
		{"four-dash closing", "---\nsensitivity: personal\n-----  \nbody", `frontmatter closes with "-----" instead of '---', so`},
		{"blank line and no closing", "\n---\nsensitivity: personal\n", "frontmatter starts after a blank line and has no closing '---' line"},
		{"CRLF after a blank line", "\r\n---\r\nsensitivity: personal\r\n---\r\n", "starts after a blank line"},
		{"the fix", "\n---\nsensitivity: personal\n---\n", `its "sensitivity" is ignored: the note is open unless a personal_paths glob matches it; begin the note with a line of exactly '---'`},

		{"no frontmatter", "sensitivity: personal\n", ""},
		{"opening line only", "---", ""},
		{"key after the dots", "---\ntitle: T\n...\nsensitivity: personal\n", ""},
		{"key inside a longer name", "---\nhypersensitivity: personal\n", ""},
		{"key not followed by a colon", "---\nsensitivity matters\n", ""},
		{"key mid-line", "---\nthe sensitivity: personal\n", ""},
		{"key after a near-miss block", "\n---\ntitle: T\n---\nsensitivity: personal\n", ""},
		{"key after a longer closing", "---\ntitle: T\n----\nsensitivity: personal\n", ""},
		{"a rule after text", "Text first.\n\n---\nsensitivity: personal\n---\n", ""},
		{"two dashes", "\n--\nsensitivity: personal\n--\n", ""},
		{"blank lines only", "\n\n \n", ""},
		{"a spaced rule", "- - -\nsensitivity: personal\n- - -\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Parse("n.md", []byte(tt.src), "sensitivity")
			if n.Sensitivity != "" || n.SensitivityProblem != "" {
				t.Errorf("Sensitivity = %q, problem %q; want none: Obsidian reads no frontmatter here", n.Sensitivity, n.SensitivityProblem)
			}
			switch {
			case tt.ignored == "" && n.SensitivityIgnored != "":
				t.Errorf("SensitivityIgnored = %q, want none", n.SensitivityIgnored)
			case tt.ignored != "" && !strings.Contains(n.SensitivityIgnored, tt.ignored):
				t.Errorf("SensitivityIgnored = %q, want one holding %q", n.SensitivityIgnored, tt.ignored)
			}
		})
	}
	if n := Parse("n.md", []byte("---\nsensitivity: personal\n"), ""); n.SensitivityIgnored != "" {
		t.Errorf("with no key, SensitivityIgnored = %q", n.SensitivityIgnored)
	}
	if n := Parse("n.md", []byte("---\nsensitivity: personal\n---\nbody"), "sensitivity"); n.Sensitivity != vault.SensitivityPersonal || n.SensitivityIgnored != "" {
		t.Errorf("closed frontmatter: Sensitivity = %q, SensitivityIgnored = %q", n.Sensitivity, n.SensitivityIgnored)
	}
}
