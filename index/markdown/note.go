package markdown

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/vaultask/vaultask/vault"
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
	// Sensitivity is the override the frontmatter sets with the key Parse
	// was given: vault.SensitivityOpen or vault.SensitivityPersonal when its value is
	// that word (trimmed, in any case); vault.SensitivityPersonal too when the
	// override is there but wrong, as SensitivityProblem says; "" when there
	// is none (no frontmatter, no such key in any case, or invalid YAML
	// that does not mention the key).
	Sensitivity string
	// SensitivityProblem is "" unless the override is wrong: then it says
	// how, and Sensitivity is vault.SensitivityPersonal, so that a mistake never
	// opens a note. Wrong are a frontmatter that is not valid YAML (a key
	// given twice included) but has a line where the key, in any case, is
	// followed by ':'; a value that is not a string, or none; a string
	// other than open or personal; and the key spelled in another case.
	SensitivityProblem string
	// SensitivityIgnored is "" unless the text opens with a block that
	// looks like frontmatter but is not as Obsidian reads it — after a
	// blank line, opened or closed by an indented dash line or one of more
	// than three dashes, or never closed by a "---" line (none at all, or
	// "..." instead) — and a line of that block starts with the key, in any
	// case: then it says how the block misses and what to fix. Obsidian
	// reads such a block as text, so the note keeps no override
	// (Sensitivity is ""), as Obsidian shows it; this is for a warning that
	// the key is not doing what it seems to.
	SensitivityIgnored string

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
	text := normalizeText(src)
	y, body := splitFrontmatter(text)
	fm, yamlErr := decodeFrontmatter(y)
	sens, problem := sensitivity(fm, y, yamlErr, sensitivityKey)
	var ignored string
	if body == text {
		ignored = ignoredOverride(text, sensitivityKey)
	}
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
		Title:              title(path, fm),
		Frontmatter:        fm,
		Body:               body,
		Aliases:            unique(aliases, normalizeAlias, func(s string) string { return s }),
		Tags:               unique(tags, normalizeTag, strings.ToLower),
		Links:              m.links(wikilinks, isTopicNote(path)),
		PlainText:          m.plain,
		Sensitivity:        sens,
		SensitivityProblem: problem,
		SensitivityIgnored: ignored,
		markup:             m,
	}
}

// Sensitivity is the override a note's frontmatter gives with the key
// sensitivityKey, the problem when it is wrong, and why it is ignored when
// Obsidian does not read it, as Parse finds them (Note.Sensitivity,
// Note.SensitivityProblem, Note.SensitivityIgnored), reading the
// frontmatter only: what reclassifying a note under another key needs.
func Sensitivity(src []byte, sensitivityKey string) (value, problem, ignored string) {
	text := normalizeText(src)
	y, body := splitFrontmatter(text)
	fm, yamlErr := decodeFrontmatter(y)
	value, problem = sensitivity(fm, y, yamlErr, sensitivityKey)
	if body == text {
		ignored = ignoredOverride(text, sensitivityKey)
	}
	return value, problem, ignored
}

// normalizeText drops a leading byte-order mark and turns line endings into
// "\n".
func normalizeText(src []byte) string {
	text := strings.TrimPrefix(string(src), "\ufeff")
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
}

// splitFrontmatter separates a leading "---" ... "---" block (trailing spaces
// on the delimiter lines allowed) from the body and returns the YAML between
// the delimiters. Without a closing line there is no frontmatter: the YAML is
// "" and the whole text is body.
func splitFrontmatter(text string) (yamlText, body string) {
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || !isDelimiter(first) {
		return "", text
	}
	for off := 0; off <= len(rest); {
		line, _, more := strings.Cut(rest[off:], "\n")
		if isDelimiter(line) {
			if more {
				body = rest[off+len(line)+1:]
			}
			return rest[:off], body
		}
		if !more {
			break
		}
		off += len(line) + 1
	}
	return "", text
}

// ignoredOverride is Note.SensitivityIgnored for a text that
// splitFrontmatter found no frontmatter in: one that opens like frontmatter
// but not as Obsidian reads it, whose would-be block holds the key. The
// block opens at the first line that is not blank, a line of three dashes
// or more, and it misses when it starts after a blank line, when its dash
// line is indented or longer than '---', or when no '---' line closes it:
// it ends at the next dash line (indented or longer: a miss), a "..." line
// (YAML's end of document, which Obsidian does not take for the end of
// frontmatter), or the end of the text.
func ignoredOverride(text, key string) string {
	if key == "" {
		return ""
	}
	var misses []string
	line, rest, more := strings.Cut(text, "\n")
	for strings.TrimSpace(line) == "" && more {
		line, rest, more = strings.Cut(rest, "\n")
		misses = []string{"starts after a blank line"}
	}
	open, ok := dashLine(line)
	if !ok || !more {
		return ""
	}
	if open != "" {
		misses = append(misses, "opens with "+open)
	}
	closing, mentioned := "has no closing '---' line", false
	for more {
		line, rest, more = strings.Cut(rest, "\n")
		if strings.TrimRight(line, " \t") == "..." {
			closing = "is closed with '...', which Obsidian does not take for its end"
			break
		}
		if how, ok := dashLine(line); ok {
			closing = ""
			if how != "" {
				closing = "closes with " + how
			}
			break
		}
		mentioned = mentioned || startsWithKey(line, key)
	}
	if !mentioned {
		return ""
	}
	if closing != "" {
		misses = append(misses, closing)
	}
	return fmt.Sprintf("frontmatter %s, so Obsidian shows it as text and its %q is ignored: the note is open unless a personal_paths glob matches it; "+
		"begin the note with a line of exactly '---', nothing before it, and end the frontmatter with another", strings.Join(misses, " and "), key)
}

// dashLine reports whether line is three dashes or more, indented or not,
// and how it misses being a frontmatter delimiter: "" when it is one
// ("---", trailing spaces allowed).
func dashLine(line string) (miss string, ok bool) {
	dashes := strings.Trim(line, " \t")
	if len(dashes) < 3 || strings.Trim(dashes, "-") != "" {
		return "", false
	}
	switch {
	case isDelimiter(line):
		return "", true
	case strings.TrimLeft(line, " \t") != line:
		return fmt.Sprintf("an indented %q", strings.TrimRight(line, " \t")), true
	}
	return fmt.Sprintf("%q instead of '---'", dashes), true
}

// startsWithKey reports whether line starts with key, in any case, quoted
// or not, followed by ':' (spaces between allowed): a YAML mapping key.
func startsWithKey(line, key string) bool {
	line = strings.TrimLeft(line, " \t\"'")
	if len(line) < len(key) || !strings.EqualFold(line[:len(key)], key) {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(line[len(key):], "\"' \t"), ":")
}

func isDelimiter(line string) bool {
	return strings.TrimRight(line, " \t") == "---"
}

// decodeFrontmatter returns the YAML mapping, or nil when the YAML is empty,
// malformed or not a mapping, with the error that made it malformed.
func decodeFrontmatter(y string) (map[string]any, error) {
	var fm map[string]any
	if err := yaml.Unmarshal([]byte(y), &fm); err != nil || len(fm) == 0 {
		return nil, err
	}
	return fm, nil
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

// sensitivity returns the override the frontmatter sets with key, and what
// is wrong with it. fm is the decoded frontmatter, y its YAML and yamlErr
// why y could not be decoded. Whatever is wrong makes the note personal.
func sensitivity(fm map[string]any, y string, yamlErr error, key string) (string, string) {
	const personal = ": treated as personal"
	switch {
	case key == "":
		return "", ""
	case yamlErr != nil:
		if !mentionsKey(y, key) {
			return "", ""
		}
		return vault.SensitivityPersonal, fmt.Sprintf("frontmatter mentions %q but its YAML is not valid (%s)%s", key, yamlProblem(yamlErr), personal)
	}
	var variants []string
	for k := range fm {
		if k != key && strings.EqualFold(k, key) {
			variants = append(variants, k)
		}
	}
	if len(variants) > 0 {
		slices.Sort(variants)
		return vault.SensitivityPersonal, fmt.Sprintf("frontmatter key %q is not spelled %q (keys are case-sensitive)%s", variants[0], key, personal)
	}
	v, ok := fm[key]
	if !ok {
		return "", ""
	}
	switch v := v.(type) {
	case nil:
		return vault.SensitivityPersonal, fmt.Sprintf("frontmatter %q has no value%s", key, personal)
	case string:
		switch s := strings.ToLower(strings.TrimSpace(v)); s {
		case vault.SensitivityOpen, vault.SensitivityPersonal:
			return s, ""
		}
		return vault.SensitivityPersonal, fmt.Sprintf("frontmatter %q is %q, not %s or %s%s", key, v, vault.SensitivityOpen, vault.SensitivityPersonal, personal)
	default:
		return vault.SensitivityPersonal, fmt.Sprintf("frontmatter %q is %v, not a string%s", key, v, personal)
	}
}

// mentionsKey reports whether a line of the YAML y holds key, in any case and
// not inside a longer name, followed by ':' (a closing quote and spaces
// between allowed): malformed frontmatter that may mean to set it.
func mentionsKey(y, key string) bool {
	y, key = strings.ToLower(y), strings.ToLower(key)
	for from := 0; ; {
		i := strings.Index(y[from:], key)
		if i < 0 {
			return false
		}
		i += from
		from = i + 1
		if i > 0 && isNameByte(y[i-1]) {
			continue
		}
		rest := strings.TrimLeft(y[i+len(key):], "\"' \t")
		if strings.HasPrefix(rest, ":") {
			return true
		}
	}
}

func isNameByte(b byte) bool {
	return b == '_' || b == '-' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 0x80
}

// yamlProblem is a YAML error on one line: the decoder lists several
// problems on lines of their own.
func yamlProblem(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}
