package markdown

import (
	"fmt"
	"path"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Sensitivity overrides a note's frontmatter may set.
const (
	SensitivityOpen     = "open"
	SensitivityPersonal = "personal"
)

// Note is what one note's markdown says about itself.
type Note struct {
	// Title is the frontmatter title when it is a non-blank string, else
	// the path's base name without its .md extension.
	Title string
	// Frontmatter is the YAML mapping between a first line "---" and the
	// next line "---", nil when there is none, when it is empty, or when it
	// is malformed or not a mapping. A delimited block is frontmatter even
	// when its YAML is malformed, as in Obsidian: it never reaches Body.
	Frontmatter map[string]any
	// Body is the markdown after the frontmatter block, or the whole text
	// when there is none. A leading byte-order mark is dropped and line
	// endings are "\n" ("\r\n" and a lone "\r" are converted).
	Body string
	// Aliases come from the frontmatter keys aliases and alias: a list, or
	// a string holding a comma-separated list. Trimmed, blanks and
	// duplicates dropped.
	Aliases []string
	// Tags are the frontmatter tags (keys tags and tag: a list, or a string
	// of tags separated by commas or spaces) followed by the inline #tags of
	// the body; without '#', purely numeric ones dropped, nested tags such as
	// "a/b" kept, deduplicated case-insensitively keeping the first
	// spelling, in order of first appearance.
	Tags []string
	// Links are the links in the body outside code, in document order.
	Links []Link
	// PlainText is "" when the body was parsed as markdown. Otherwise it
	// says why it was not, naming the construct and its line in the note,
	// e.g. "line 3 nests 100000 block levels (limit 32): indexed as plain
	// text": some texts would take the markdown parser seconds or minutes.
	// The body is then plain text: no code, no headings, no markdown links;
	// wikilinks and tags are still found, and Chunks cuts it at blank
	// lines and sizes.
	PlainText string
	// Sensitivity is the frontmatter value of the key Parse was given,
	// trimmed and lower-cased, when that is SensitivityOpen or
	// SensitivityPersonal; otherwise "".
	Sensitivity string

	// markup is Body as Parse parsed it, kept so that Chunks need not parse
	// it again.
	markup *markup
}

// Chunks cuts the note's Body into chunks: the same chunks as
// ChunkBody(n.Body, opts), without parsing the body a second time when n
// comes from Parse and its Body is unchanged.
func (n Note) Chunks(opts ChunkOptions) []Chunk {
	if n.markup == nil || n.markup.body != n.Body {
		return ChunkBody(n.Body, opts)
	}
	return n.markup.chunks(opts)
}

// Parse reads one note. path is its vault-relative path ("Folder/Note.md"),
// which gives the fallback title and decides whether the note is a topic
// note; src is its text; sensitivityKey names the frontmatter key that
// overrides the note's sensitivity ("" for none). Parse never fails: text
// that cannot be understood is body text.
func Parse(path string, src []byte, sensitivityKey string) Note {
	text := strings.TrimPrefix(string(src), "\ufeff")
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	fm, body := splitFrontmatter(text)
	m := parseMarkup(body, 1+strings.Count(text[:len(text)-len(body)], "\n"))
	wikilinks := m.wikilinks()

	var tags []string
	for _, key := range []string{"tags", "tag"} {
		tags = append(tags, frontmatterStrings(fm[key], splitTagList)...)
	}
	tags = append(tags, m.inlineTags(wikilinks)...)

	var aliases []string
	for _, key := range []string{"aliases", "alias"} {
		aliases = append(aliases, frontmatterStrings(fm[key], splitAliasList)...)
	}

	return Note{
		Title:       title(path, fm),
		Frontmatter: fm,
		Body:        body,
		Aliases:     unique(aliases, normalizeAlias, func(s string) string { return s }),
		Tags:        unique(tags, normalizeTag, strings.ToLower),
		Links:       m.links(wikilinks, isTopicNote(path)),
		PlainText:   m.plain,
		Sensitivity: sensitivity(fm, sensitivityKey),
		markup:      m,
	}
}

// splitFrontmatter separates a leading "---" ... "---" block (trailing spaces
// on the delimiter lines allowed) from the body. Without a closing line there
// is no frontmatter and the whole text is body.
func splitFrontmatter(text string) (map[string]any, string) {
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || !isDelimiter(first) {
		return nil, text
	}
	for off := 0; off <= len(rest); {
		line, _, more := strings.Cut(rest[off:], "\n")
		if isDelimiter(line) {
			body := ""
			if more {
				body = rest[off+len(line)+1:]
			}
			return decodeFrontmatter(rest[:off]), body
		}
		if !more {
			break
		}
		off += len(line) + 1
	}
	return nil, text
}

func isDelimiter(line string) bool {
	return strings.TrimRight(line, " \t") == "---"
}

// decodeFrontmatter returns the YAML mapping, or nil when the YAML is empty,
// malformed or not a mapping.
func decodeFrontmatter(y string) map[string]any {
	var fm map[string]any
	if err := yaml.Unmarshal([]byte(y), &fm); err != nil || len(fm) == 0 {
		return nil
	}
	return fm
}

func title(p string, fm map[string]any) string {
	if t, ok := fm["title"].(string); ok && strings.TrimSpace(t) != "" {
		return strings.TrimSpace(t)
	}
	p = strings.ReplaceAll(p, `\`, "/")
	if p == "" {
		return ""
	}
	base := path.Base(p)
	if len(base) > 3 && strings.EqualFold(base[len(base)-3:], ".md") {
		base = base[:len(base)-3]
	}
	return base
}

// frontmatterStrings reads a frontmatter value that may be a list or a single
// string (cut up by split). Numbers count as their text; nested lists, maps
// and other values are ignored.
func frontmatterStrings(v any, split func(string) []string) []string {
	switch v := v.(type) {
	case string:
		return split(v)
	case []any:
		var out []string
		for _, item := range v {
			if s, ok := scalarString(item); ok {
				out = append(out, s)
			}
		}
		return out
	default:
		if s, ok := scalarString(v); ok {
			return []string{s}
		}
		return nil
	}
}

func scalarString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case int, int64, uint64, float64:
		return fmt.Sprint(v), true
	default:
		return "", false
	}
}

func splitAliasList(s string) []string {
	return strings.Split(s, ",")
}

// unique normalises each item, drops those norm rejects, and keeps the first
// item of each key, in order. It returns nil rather than an empty slice.
func unique(items []string, norm func(string) (string, bool), key func(string) string) []string {
	var out []string
	seen := map[string]bool{}
	for _, item := range items {
		item, ok := norm(item)
		if !ok || seen[key(item)] {
			continue
		}
		seen[key(item)] = true
		out = append(out, item)
	}
	return out
}

func normalizeAlias(alias string) (string, bool) {
	alias = strings.TrimSpace(alias)
	return alias, alias != ""
}

func sensitivity(fm map[string]any, key string) string {
	if key == "" {
		return ""
	}
	v, _ := fm[key].(string)
	switch v = strings.ToLower(strings.TrimSpace(v)); v {
	case SensitivityOpen, SensitivityPersonal:
		return v
	default:
		return ""
	}
}
