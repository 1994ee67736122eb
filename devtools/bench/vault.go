package bench

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/vaultask/vaultask/tstest/livesyncput"
)

// GeneratorVersion names what Generate makes; cached vaults and indexes are
// keyed by it, so a change to the generator must change it.
const GeneratorVersion = "gen1"

// PersonalPaths is the sensitivity setting the generated vault is indexed
// with: its personal folder and the journal.
const PersonalPaths = `["Personal/**","Journal/**"]`

var (
	adjectives = strings.Fields(`quiet copper early bright narrow heavy gentle bitter hollow silver rapid
		ancient careful crooked distant eager frozen golden humble idle jagged kind lucky mellow noble
		patient rough sturdy tidy urgent vivid wooden young brisk crimson dusty fragile hidden lofty
		modest plain rusty salty shallow smooth spare steep tender thin warm wild windy woollen`)
	nouns = strings.Fields(`kettle garden ledger harbour lantern orchard bridge compass library river
		meadow workshop notebook bicycle chimney engine forest glacier hammer island journal ladder
		market needle oven pantry quarry radio saddle tunnel umbrella valley window yard anchor barn
		cellar dough fence gutter hinge inkwell jar kiln loom mill nest oar pier quilt rope shelf
		sourdough telescope vinegar wagon yeast almanac beacon cabin dune easel ferry greenhouse hive`)
	verbs = strings.Fields(`repair sharpen polish measure sketch prune ferment knead calibrate paint
		clean restore plant harvest drain seal varnish weigh label store sort tune wire patch bake
		brew fold stitch mend sand oil dry soak sieve grind roast plane chisel glaze carve braid`)
	places = strings.Fields(`Lisbon Oslo Kyoto Tallinn Porto Bergen Lyon Galway Trieste Gdansk
		Utrecht Bruges Salzburg Aarhus Ghent Tromso Bilbao Turku Nantes Split`)
	topicNames = []string{"Woodworking", "Baking", "Gardening", "Cycling", "Astronomy", "Bookbinding",
		"Beekeeping", "Sailing", "Pottery", "Photography", "Brewing", "Knitting", "Birding", "Hiking",
		"Cheesemaking", "Fermentation", "Calligraphy", "Carpentry", "Foraging", "Radio", "Clocks",
		"Maps", "Typewriters", "Kites", "Glassblowing", "Weaving", "Orienteering", "Chess",
		"Printmaking", "Bonsai", "Canoeing", "Blacksmithing", "Tea", "Coffee", "Origami", "Soapmaking",
		"Candles", "Leatherwork", "Ceramics", "Fishing", "Climbing", "Mushrooms", "Pickling",
		"Stargazing", "Restoration", "Archery", "Falconry", "Tailoring", "Preserves", "Lutherie",
		"Masonry", "Thatching", "Cartography", "Horology", "Apiculture", "Viticulture", "Dyeing",
		"Mosaics", "Puppetry", "Marquetry"}
)

// rng is a deterministic source for one note, so note i is the same in a
// vault of any size.
func rng(i int, salt uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(i)+1, salt))
}

func pick(r *rand.Rand, words []string) string {
	// Squared uniform: early words come up more often, as in real text.
	f := r.Float64()
	return words[int(f*f*float64(len(words)))]
}

func sentence(r *rand.Rand) string {
	var s string
	switch r.IntN(5) {
	case 0:
		s = fmt.Sprintf("The %s %s needs to %s before the %s %s is ready", pick(r, adjectives), pick(r, nouns), pick(r, verbs), pick(r, adjectives), pick(r, nouns))
	case 1:
		s = fmt.Sprintf("To %s a %s, first %s the %s and let it rest for %d minutes", pick(r, verbs), pick(r, nouns), pick(r, verbs), pick(r, nouns), 5+r.IntN(55))
	case 2:
		s = fmt.Sprintf("In %s I saw a %s %s next to an old %s", pick(r, places), pick(r, adjectives), pick(r, nouns), pick(r, nouns))
	case 3:
		s = fmt.Sprintf("A %s %s works better with a %s %s than with a %s", pick(r, adjectives), pick(r, nouns), pick(r, adjectives), pick(r, nouns), pick(r, nouns))
	default:
		s = fmt.Sprintf("Remember to %s the %s every %d days and keep the %s %s", pick(r, verbs), pick(r, nouns), 2+r.IntN(12), pick(r, nouns), pick(r, adjectives))
	}
	return s + "."
}

func paragraph(r *rand.Rand, sentences int) string {
	parts := make([]string, sentences)
	for i := range parts {
		parts[i] = sentence(r)
	}
	return strings.Join(parts, " ")
}

// kind of generated note i.
func kind(i int) string {
	switch i % 10 {
	case 0, 1, 2, 3:
		return "clipping"
	case 4, 5, 6:
		return "note"
	case 7, 8:
		return "daily"
	default:
		return "personal"
	}
}

// topicOf is the topic of note i: a fixed one, whatever the vault's size.
func topicOf(i int) int { return i % len(topicNames) }

func title(i int) string {
	r := rng(i, 7)
	return fmt.Sprintf("%s %s %d", capitalize(pick(r, adjectives)), pick(r, nouns), i)
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// NotePath is the vault path of generated note i.
func NotePath(i int) string {
	switch kind(i) {
	case "clipping":
		return "20 clippings/" + title(i) + ".md"
	case "note":
		return "Notes/" + title(i) + ".md"
	case "daily":
		return "Journal/" + time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format("2006-01-02") + fmt.Sprintf(" %d.md", i)
	default:
		return "Personal/" + title(i) + ".md"
	}
}

// link is a wikilink to a generated note before i (or to i itself), so a
// vault of n notes is the first n notes of any larger one.
func link(r *rand.Rand, i int) string {
	j := r.IntN(i + 1)
	p := NotePath(j)
	return "[[" + strings.TrimSuffix(p[strings.LastIndexByte(p, '/')+1:], ".md") + "]]"
}

// NoteText is the markdown of generated note i: a clipping (frontmatter,
// tags, sections) under a topic, a note with links and inline tags, a daily
// note, or a personal note.
func NoteText(i int) string {
	r := rng(i, 11)
	var b strings.Builder
	topic := topicNames[topicOf(i)]
	switch kind(i) {
	case "clipping":
		fmt.Fprintf(&b, "---\ntags: [%s, %s]\nsource: https://example.org/%d\n---\n# %s\n\n%s\n", strings.ToLower(topic), pick(r, nouns), i, title(i), paragraph(r, 3+r.IntN(3)))
		for s := range 1 + r.IntN(3) {
			fmt.Fprintf(&b, "\n## %s the %s (%d)\n\n", capitalize(pick(r, verbs)), pick(r, nouns), s+1)
			for range 1 + r.IntN(3) {
				b.WriteString(paragraph(r, 3+r.IntN(4)) + "\n\n")
			}
		}
	case "note", "personal":
		fmt.Fprintf(&b, "# %s\n\n%s See %s and %s. #%s\n", title(i), paragraph(r, 2+r.IntN(4)), link(r, i), link(r, i), strings.ToLower(topic))
		for range r.IntN(3) {
			fmt.Fprintf(&b, "\n## %s\n\n%s Related: %s.\n", capitalize(pick(r, nouns)), paragraph(r, 3+r.IntN(5)), link(r, i))
		}
	default:
		fmt.Fprintf(&b, "# %s\n\n", strings.TrimSuffix(NotePath(i)[len("Journal/"):], ".md"))
		for range 3 + r.IntN(5) {
			fmt.Fprintf(&b, "- %s %s\n", sentence(r), link(r, i))
		}
	}
	return b.String()
}

// topicText is topic note t of a vault of n notes: its clippings between
// the markers the index reads as topic membership.
func topicText(t, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nA map of what I clipped about %s.\n\n<!-- begin:clippings -->\n", topicNames[t], strings.ToLower(topicNames[t]))
	for i := t; i < n; i += len(topicNames) {
		if kind(i) == "clipping" {
			fmt.Fprintf(&b, "- [[%s]]\n", title(i))
		}
	}
	b.WriteString("<!-- end:clippings -->\n")
	return b.String()
}

// Generate returns a vault of n notes plus its topic notes (under
// "99 topics/"): about 40% clippings, 30% notes, 20% daily notes and 10%
// personal notes, with wikilinks between them, tags and topic regions.
func Generate(n int) []livesyncput.Note {
	out := make([]livesyncput.Note, 0, n+len(topicNames))
	for i := range n {
		out = append(out, livesyncput.Note{Path: NotePath(i), Text: NoteText(i)})
	}
	return append(out, topicNotes(n)...)
}

// topicNotes are the topic notes of a vault of n notes.
func topicNotes(n int) []livesyncput.Note {
	var out []livesyncput.Note
	for t := range min(n, len(topicNames)) {
		out = append(out, livesyncput.Note{Path: "99 topics/" + topicNames[t] + ".md", Text: topicText(t, n)})
	}
	return out
}

// Questions are retrieval queries in the generated vault's words.
func Questions(k int) []string {
	out := make([]string, k)
	for i := range out {
		r := rng(i, 13)
		switch i % 3 {
		case 0:
			out[i] = fmt.Sprintf("how do I %s the %s %s?", pick(r, verbs), pick(r, adjectives), pick(r, nouns))
		case 1:
			out[i] = fmt.Sprintf("what did I note about the %s in %s?", pick(r, nouns), pick(r, places))
		default:
			out[i] = fmt.Sprintf("%s and %s for %s", pick(r, nouns), pick(r, nouns), strings.ToLower(topicNames[r.IntN(len(topicNames))]))
		}
	}
	return out
}
