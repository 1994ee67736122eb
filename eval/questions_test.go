package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "questions.tsv")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadQuestions(t *testing.T) {
	t.Parallel()
	f, err := ReadQuestions(writeFile(t, "# c\r\n\r\nq one?\ta.md | b/c.md\r\nq two?\t\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	qs := f.Questions
	if len(qs) != 2 || qs[0].Line != 3 || !cmp.Equal(qs[0].Acceptable, []string{"a.md", "b/c.md"}) || qs[1].Covered() {
		t.Fatalf("ReadQuestions = %+v", qs)
	}
	if f.Groups() != nil {
		t.Errorf("no group lines, groups %q", f.Groups())
	}
	if _, err := ReadQuestions(filepath.Join(t.TempDir(), "absent.tsv")); err == nil {
		t.Error("a missing file reads")
	}
}

// "# group: NAME" puts the questions after it in NAME up to the next such
// line; other comments, even ones that mention groups, do not.
func TestQuestionGroups(t *testing.T) {
	t.Parallel()
	f, err := ParseQuestions("q.tsv", []byte(`# Groups: '# group: NAME' starts a group
before?	a.md
# group: direct
one?	a.md
# via: hub.md
two?	
# group:  far 
three?	b.md
# group: direct
four?	a.md
`))
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]string
	for _, q := range f.Questions {
		got = append(got, [2]string{q.Text, q.Group})
	}
	want := [][2]string{{"before?", ""}, {"one?", "direct"}, {"two?", "direct"}, {"three?", "far"}, {"four?", "direct"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"", "direct", "far"}, f.Groups()); diff != "" {
		t.Errorf("Groups (-want +got):\n%s", diff)
	}
	if _, err := ParseQuestions("q.tsv", []byte("a?\tA.md\n# group: \nb?\tB.md\n")); err == nil || !strings.Contains(err.Error(), "q.tsv:2: ") ||
		!strings.Contains(err.Error(), "without a group name") {
		t.Errorf("a group line without a name: %v", err)
	}
}

func TestCheckPaths(t *testing.T) {
	t.Parallel()
	f, err := ParseQuestions("q.tsv", []byte("a?\tA.md|Nowhere.md\nb?\t\nc?\tB.md|Gone.md\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = f.CheckPaths([]string{"A.md", "B.md"})
	if err == nil || err.Error() != "q.tsv:1: Nowhere.md is not in the index\nq.tsv:3: Gone.md is not in the index" {
		t.Errorf("CheckPaths: %v", err)
	}
	if err := f.CheckPaths([]string{"A.md", "B.md", "Gone.md", "Nowhere.md"}); err != nil {
		t.Errorf("every path indexed: %v", err)
	}
}

// FuzzParseQuestions: any file either parses into questions that each have
// text, a line and only non-empty paths, or is an error naming the file.
func FuzzParseQuestions(f *testing.F) {
	f.Add([]byte("# header\nhow do I link notes?\ten/Internal links.md|en/Aliases.md\nwhat is the capital of Australia?\t\n"))
	f.Add([]byte("no tab here\n"))
	f.Add([]byte("a\tb\tc\r\n\n"))
	f.Add([]byte("# group: direct\na?\tA.md\n# group:\nb?\t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		qf, err := ParseQuestions("q.tsv", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "q.tsv") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, q := range qf.Questions {
			if strings.TrimSpace(q.Text) == "" || q.Line < 1 {
				t.Fatalf("question %+v has no text or line", q)
			}
			if q.Group != strings.TrimSpace(q.Group) {
				t.Fatalf("question %+v has an untrimmed group", q)
			}
			for _, p := range q.Acceptable {
				if strings.TrimSpace(p) == "" {
					t.Fatalf("question %+v has an empty path", q)
				}
			}
		}
	})
}
