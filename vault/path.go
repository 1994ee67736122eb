package vault

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode"
)

// A note has four identities, each for its own use:
//
//   - its vault path, with its real case and ".md" ("Notes/Shopping List.md"):
//     what a user sees and what a citation links, as CleanPath returns it;
//   - its LiveSync _id (NoteInput.SourceID): the source's key, by default
//     the path lower-cased, another id when the vault obfuscates paths;
//     only the feed and the note status speak it;
//   - its doc_id, DocID of the vault path: the index's key, the path
//     lower-cased, so that two spellings of one path are one note;
//   - a link key, LinkKey of a [[wikilink]]: what a link names, without
//     heading, block, shown text or ".md", lower-cased; it resolves to a
//     doc_id as Obsidian resolves a link (a path's end, a basename, an alias).

// ErrUncleanPath is an upsert whose path is not as CleanPath returns it.
var ErrUncleanPath = errors.New("unclean note path")

// CleanPath is the vault path a source may index p as: '/'-separated and
// relative, without empty, "." or ".." segments. A doubled or "./" segment is
// folded away; what cannot be a note of the vault is refused with the reason,
// for the note's status: an absolute path, one that climbs out of the vault
// with "..", or a name holding a control character such as a line break
// (a citation could not be written or clicked).
func CleanPath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path")
	}
	if i := strings.IndexFunc(p, unicode.IsControl); i >= 0 {
		return "", fmt.Errorf("unclean path %q: it holds a control character (%U)", p, []rune(p[i:])[0])
	}
	if strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("unclean path %q: vault paths are relative, this one is absolute", p)
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." {
			return "", fmt.Errorf("unclean path %q: it climbs out of the vault (a .. segment)", p)
		}
	}
	clean := path.Clean(p)
	if clean == "." {
		return "", fmt.Errorf("unclean path %q: it names no file", p)
	}
	return clean, nil
}

// DocID is the index key of a vault path: the path lower-cased, as
// LiveSync's default ids are.
func DocID(vaultPath string) string {
	return strings.ToLower(vaultPath)
}

// NormalizeTarget is the form link resolution compares: backslashes turned
// into slashes, surrounding spaces trimmed and one trailing ".md" (any case)
// removed. Case is kept; resolution decides how to fold it.
func NormalizeTarget(target string) string {
	t := strings.TrimSpace(strings.ReplaceAll(target, `\`, "/"))
	if len(t) >= 3 && strings.EqualFold(t[len(t)-3:], ".md") {
		t = strings.TrimSpace(t[:len(t)-3])
	}
	return t
}

// LinkKey is the key a wikilink text resolves by: the target without its
// heading, block or shown text, normalised and lower-cased, as edges store
// it. It is "" for a link into the same note.
func LinkKey(link string) string {
	t, _, _ := strings.Cut(link, "|")
	t = strings.TrimSuffix(t, `\`) // a table cell escapes the pipe
	t, _, _ = strings.Cut(t, "#")
	return strings.ToLower(NormalizeTarget(t))
}
