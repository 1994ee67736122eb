package index

import (
	"fmt"
	"path"
	"strings"
	"unicode"
)

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
