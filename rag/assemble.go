package rag

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/vaultask/vaultask/vault"
)

// graphSlots are the final places expanded hits may take.
type graphSlots struct {
	// Graph are places any expanded hit may take.
	Graph int
	// Members are places only a member of a topic note among the hits may
	// take (the notes its clippings region links to: a relation the
	// vault's owner curated, unlike a plain link's).
	Members int
	// Maps are places only a note linked from a map of content among the
	// hits may take (Reach.Map).
	Maps int
}

// selectFinal takes the final hits from candidates, best first: at most finalK,
// of which at most slots.Graph are expanded hits, and besides them at most
// slots.Members members of a topic note and slots.Maps notes linked from a
// map of content; except when there are not enough direct hits to fill
// finalK, when expanded hits the quota held back fill the rest. A direct
// hit promoted as a member (promoteMembers) takes a member slot when one is
// left, and its own place as a direct hit when none is. It returns
// the final hits in candidate order and the expanded hits the quota kept
// out.
func selectFinal(candidates []Hit, finalK int, slots graphSlots) (final, heldBack []Hit) {
	var picked, overflow []int
	graph, members, maps := 0, 0, 0
	for i, h := range candidates {
		if len(picked) == finalK {
			break
		}
		if h.Graph != nil {
			switch {
			case h.Graph.Relation == vault.RelationMember && members < slots.Members:
				members++
			case h.Graph.Map && maps < slots.Maps:
				maps++
			case graph < slots.Graph:
				graph++
			case h.From(FromVector) || h.From(FromFTS):
				// A direct hit promoted as a member keeps its own place.
			default:
				overflow = append(overflow, i)
				continue
			}
		}
		picked = append(picked, i)
	}
	// The thin-answer exception: direct hits ran out before finalK.
	for len(picked) < finalK && len(overflow) > 0 {
		picked = append(picked, overflow[0])
		overflow = overflow[1:]
	}
	slices.Sort(picked)
	for _, i := range picked {
		final = append(final, candidates[i])
	}
	for _, i := range overflow {
		heldBack = append(heldBack, candidates[i])
	}
	return final, heldBack
}

// assemble orders the final hits for the prompt in graph order, not score
// order: notes in the order of their best hit, except that a topic note
// comes right before the first of its members in the context (a member's
// topic notes by path), and each note's chunks adjacent in document order.
// topicOf maps a doc id to the topic notes that clip it.
func assemble(final []Hit, topicOf map[string][]string) []Hit {
	byDoc := map[string][]Hit{}
	var notes []string
	for _, h := range final {
		id := h.Chunk.DocID
		if _, ok := byDoc[id]; !ok {
			notes = append(notes, id)
		}
		byDoc[id] = append(byDoc[id], h)
	}
	out := make([]Hit, 0, len(final))
	placed := map[string]bool{}
	var place func(id string)
	place = func(id string) {
		if placed[id] {
			return
		}
		placed[id] = true
		var topics []string
		for _, t := range topicOf[id] {
			if _, inContext := byDoc[t]; inContext {
				topics = append(topics, t)
			}
		}
		slices.SortFunc(topics, func(a, b string) int { return cmp.Compare(byDoc[a][0].Chunk.Path, byDoc[b][0].Chunk.Path) })
		for _, t := range topics {
			place(t)
		}
		chunks := byDoc[id]
		slices.SortStableFunc(chunks, func(a, b Hit) int { return cmp.Compare(a.Chunk.Ordinal, b.Chunk.Ordinal) })
		out = append(out, chunks...)
	}
	for _, id := range notes {
		place(id)
	}
	return out
}

// Link is the path-qualified wikilink that cites a note in Obsidian:
// [[en/Plugins/File recovery|File recovery]]. The shown text is the title,
// or the file name when the title holds a character a link cannot.
func Link(notePath, title string) string {
	target := strings.TrimSuffix(notePath, path.Ext(notePath))
	if !strings.EqualFold(path.Ext(notePath), ".md") {
		target = notePath
	}
	shown := strings.TrimSpace(title)
	if shown == "" || strings.ContainsAny(shown, "|[]\n") {
		shown = path.Base(target)
	}
	return "[[" + target + "|" + shown + "]]"
}

// renderContext writes the assembled hits as the prompt's context: each
// chunk in a passage element labelled with its note's citation link and its
// section. The links inside a chunk become their shown text, so the only
// wikilinks a model sees are the ones it may cite; chunk text that would
// close the element early is defused.
func renderContext(hits []Hit) string {
	var b strings.Builder
	for _, h := range hits {
		fmt.Fprintf(&b, "<passage cite=%q", Link(h.Chunk.Path, h.Chunk.Title))
		if h.Chunk.HeadingPath != "" {
			fmt.Fprintf(&b, " section=%q", h.Chunk.HeadingPath)
		}
		body := strings.ReplaceAll(plainLinks(strings.TrimSpace(h.Chunk.Body)), "</passage", "< /passage")
		fmt.Fprintf(&b, ">\n%s\n</passage>\n\n", body)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// codeSpans are what plainLinks leaves alone: fenced blocks and inline code
// spans, where a [[link]] is an example of syntax.
var codeSpans = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")

// plainLinks replaces the wikilinks of note text, as vault.Wikilinks finds
// them outside code, with what Obsidian shows for them, and drops embedded
// attachments (an icon, an image).
func plainLinks(text string) string {
	src := []byte(text)
	var b strings.Builder
	last := 0
	for _, l := range vault.Wikilinks(src, codeMask(text, vault.Wikilinks(src, nil))) {
		b.WriteString(text[last:l.Start])
		if !l.Embed || !attachment(l.Inner) {
			b.WriteString(shownText(l.Inner))
		}
		last = l.End
	}
	b.WriteString(text[last:])
	return b.String()
}

// codeMask marks the bytes of text in code, taking text from left to right:
// code that opens inside one of links is that link's shown text, as in
// [[Functions#hasTag|`hasTag`]], and a link that opens inside code is code.
// nil when there is none.
func codeMask(text string, links []vault.Wikilink) []bool {
	var code []bool
	for pos := 0; pos < len(text); {
		span := codeSpans.FindStringIndex(text[pos:])
		if span == nil {
			break
		}
		start, end := pos+span[0], pos+span[1]
		for len(links) > 0 && links[0].End <= start {
			links = links[1:]
		}
		if len(links) > 0 && links[0].Start < start {
			pos = links[0].End
			continue
		}
		if code == nil {
			code = make([]bool, len(text))
		}
		for i := start; i < end; i++ {
			code[i] = true
		}
		pos = end
	}
	return code
}

// attachment reports whether an embed's link names a file that is not a
// note.
func attachment(link string) bool {
	target, _, _ := strings.Cut(link, "|")
	target, _, _ = strings.Cut(target, "#")
	ext := path.Ext(strings.TrimSpace(target))
	return ext != "" && !strings.EqualFold(ext, ".md")
}
