package eval

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// groupPrefix starts the comment line "# group: NAME", which puts every
// question after it in group NAME, up to the next such line.
const groupPrefix = "# group:"

// Question is one line of a questions file.
type Question struct {
	Line int
	Text string
	// Group is the name on the last "# group: NAME" line above the
	// question; "" before the first.
	Group string
	// Acceptable are the paths of the notes that answer it; none when the
	// vault does not cover it.
	Acceptable []string
}

// Covered reports whether the vault answers q: it has acceptable notes.
func (q Question) Covered() bool { return len(q.Acceptable) > 0 }

// QuestionFile is a parsed questions file.
type QuestionFile struct {
	Path      string
	Questions []Question
}

// ReadQuestions reads and parses the questions file at path.
func ReadQuestions(path string) (*QuestionFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseQuestions(path, data)
}

// ParseQuestions parses the lines of a questions file: the question, a TAB,
// then acceptable note paths separated by |. Lines starting with # are
// comments, except that "# group: NAME" puts the questions after it in
// group NAME. Errors name the file and line.
func ParseQuestions(path string, data []byte) (*QuestionFile, error) {
	f := &QuestionFile{Path: path}
	group := ""
	for i, line := range strings.Split(string(data), "\n") {
		at := fmt.Sprintf("%s:%d", path, i+1)
		line = strings.TrimSuffix(line, "\r")
		if name, ok := strings.CutPrefix(line, groupPrefix); ok {
			if group = strings.TrimSpace(name); group == "" {
				return nil, fmt.Errorf("%s: %q without a group name: want %s NAME", at, line, groupPrefix)
			}
			continue
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		text, paths, ok := strings.Cut(line, "\t")
		switch {
		case !ok:
			return nil, fmt.Errorf("%s: no TAB: want the question, a TAB, then note paths separated by | (none: not covered)", at)
		case strings.Contains(paths, "\t"):
			return nil, fmt.Errorf("%s: more than one TAB: want the question, a TAB, then note paths separated by |", at)
		case strings.TrimSpace(text) == "":
			return nil, fmt.Errorf("%s: empty question", at)
		}
		q := Question{Line: i + 1, Text: strings.TrimSpace(text), Group: group}
		if strings.TrimSpace(paths) != "" {
			for p := range strings.SplitSeq(paths, "|") {
				if p = strings.TrimSpace(p); p == "" {
					return nil, fmt.Errorf("%s: empty path in %q", at, paths)
				}
				q.Acceptable = append(q.Acceptable, p)
			}
		}
		f.Questions = append(f.Questions, q)
	}
	if len(f.Questions) == 0 {
		return nil, fmt.Errorf("%s: no questions", path)
	}
	return f, nil
}

// Groups are the file's group names in the order they first appear, nil
// when no question is in a named group. Questions above the first group
// line form the group "".
func (f *QuestionFile) Groups() []string {
	var names []string
	for _, q := range f.Questions {
		if !slices.Contains(names, q.Group) {
			names = append(names, q.Group)
		}
	}
	if len(names) == 1 && names[0] == "" {
		return nil
	}
	return names
}

// CheckPaths refuses acceptable paths that indexed, the index's sorted note
// paths, does not hold: a typo would otherwise count as a miss on every arm.
func (f *QuestionFile) CheckPaths(indexed []string) error {
	var errs []error
	for _, q := range f.Questions {
		for _, p := range q.Acceptable {
			if _, found := slices.BinarySearch(indexed, p); !found {
				errs = append(errs, fmt.Errorf("%s:%d: %s is not in the index", f.Path, q.Line, p))
			}
		}
	}
	return errors.Join(errs...)
}
