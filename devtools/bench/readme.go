package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The README's targets table lies between these lines, which RewriteREADME
// keeps; what is between them is written from results.json alone.
const (
	readmeBegin = "<!-- bench:targets: written by `go run -tags sqlite_fts5 ./devtools/cmd/bench -readme README.md` from reports/bench/results.json; do not edit -->"
	readmeEnd   = "<!-- /bench:targets -->"
)

// ReadReport reads the results.json a run wrote into dir/bench.
func ReadReport(dir string) (*Report, error) {
	path := filepath.Join(dir, "bench", "results.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rep, nil
}

// READMETargets is the README's block: which commit each section ran on
// (a tree with uncommitted changes said so), then BENCHMARKS.md's targets
// table.
func (rep *Report) READMETargets() string {
	var b strings.Builder
	b.WriteString("Sections ")
	var commits []string
	ids := map[string][]string{}
	for _, s := range rep.Sections {
		if s.Skipped != "" {
			continue
		}
		if _, ok := ids[s.Commit]; !ok {
			commits = append(commits, s.Commit)
		}
		ids[s.Commit] = append(ids[s.Commit], s.ID)
	}
	for i, c := range commits {
		if i > 0 {
			b.WriteString("; ")
		}
		short, dirty := strings.CutSuffix(c, "-dirty")
		fmt.Fprintf(&b, "%s at `%s`", strings.Join(ids[c], ", "), short[:min(len(short), 7)])
		if dirty {
			b.WriteString(" (with uncommitted changes)")
		}
	}
	b.WriteString(", as [reports/BENCHMARKS.md](reports/BENCHMARKS.md) records them:\n\n")
	rep.writeTargetRows(&b)
	return b.String()
}

// RewriteREADME returns readme with the block between its markers written
// from rep; a README without both markers, in order, is an error.
func RewriteREADME(readme []byte, rep *Report) ([]byte, error) {
	begin := bytes.Index(readme, []byte(readmeBegin+"\n"))
	end := bytes.Index(readme, []byte(readmeEnd))
	if begin < 0 || end < begin {
		return nil, fmt.Errorf("the README has no line %q followed by a line %q", readmeBegin, readmeEnd)
	}
	start := begin + len(readmeBegin) + 1
	return slices.Concat(readme[:start], []byte(rep.READMETargets()), readme[end:]), nil
}
