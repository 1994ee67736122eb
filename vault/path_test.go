package vault

import (
	"strings"
	"testing"
)

func TestCleanPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Notes/a.md":        "Notes/a.md",
		"Notes//a.md":       "Notes/a.md",
		"Notes/./a.md":      "Notes/a.md",
		"./Notes/a.md":      "Notes/a.md",
		"Notes/a.md/":       "Notes/a.md",
		"Ünïcode/日本.md":     "Ünïcode/日本.md",
		" spaced /name .md": " spaced /name .md",
	} {
		if got, err := CleanPath(in); err != nil || got != want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"":                    "empty",
		"../../x.md":          "climbs out",
		"Notes/../../x.md":    "climbs out",
		"/etc/x.md":           "absolute",
		"//server/x.md":       "absolute",
		"a\nb.md":             "control character",
		"tab\there.md":        "control character",
		".":                   "names no file",
		"Notes/\x00hidden.md": "control character",
	} {
		if got, err := CleanPath(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("CleanPath(%q) = %q, %v; want an error saying %q", in, got, err, why)
		}
	}
}

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"a/b.md", "a//b/./c.md", "../x", "/x", "a\nb", "", ".", "a/..b/c..md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		clean, err := CleanPath(p)
		if err != nil {
			return
		}
		if again, err := CleanPath(clean); err != nil || again != clean {
			t.Errorf("CleanPath(%q) = %q is not clean: %q, %v", p, clean, again, err)
		}
		if strings.HasPrefix(clean, "/") || strings.Contains(clean, "//") || strings.ContainsFunc(clean, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Errorf("CleanPath(%q) = %q", p, clean)
		}
		for seg := range strings.SplitSeq(clean, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Errorf("CleanPath(%q) = %q has segment %q", p, clean, seg)
			}
		}
	})
}

func TestNormalizeTarget(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Note", "Note"},
		{"Note.md", "Note"},
		{"Note.MD", "Note"},
		{"  Folder/Note.md  ", "Folder/Note"},
		{`Folder\Sub\Note.md`, "Folder/Sub/Note"},
		{"Note.md.md", "Note.md"},
		{"image.png", "image.png"},
		{".md", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := NormalizeTarget(tt.in); got != tt.want {
			t.Errorf("NormalizeTarget(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
