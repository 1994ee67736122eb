package corpustext

import "strings"

// Notes are the live Markdown notes of a dump's documents, their texts by
// vault path: each note's chunks joined, as LiveSync rebuilds it.
func Notes(docs map[string]Doc) map[string]string {
	out := map[string]string{}
	for id, d := range docs {
		if d.Deleted || d.Path == "" || !strings.HasSuffix(d.Path, ".md") || len(d.Children) == 0 {
			continue
		}
		text, err := Text(docs, "note", id)
		if err == nil {
			out[d.Path] = text
		}
	}
	return out
}
