package markdown

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreContext leaves Link.Context to TestLinkContext.
var ignoreContext = cmpopts.IgnoreFields(Link{}, "Context")

// A link's context is its line, cut to whole words near a long line's link.
func TestLinkContext(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 60)
	for _, tt := range []struct {
		name, src string
		want      []string
	}{
		{"list item", "# Plugins\n\n- [[Calendar]]: a calendar view of daily notes\n- [[Tasks]] by someone\n",
			[]string{"- [[Calendar]]: a calendar view of daily notes", "- [[Tasks]] by someone"}},
		{"markdown link", "Read [the guide](Guides/Start.md) first.", []string{"Read [the guide](Guides/Start.md) first."}},
		{"folded whitespace", "see\t[[A]]   now", []string{"see [[A]] now"}},
		{"long line", long + "near [[Target]] after " + long, []string{"word word"}},
		{"embed", "![[Diagram]]", []string{"![[Diagram]]"}},
		{"non-ASCII", strings.Repeat("ö", 200) + " då [[Not]] är " + strings.Repeat("å", 200), []string{"då [[Not]] är"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := Parse("n.md", []byte(tt.src), "")
			var got []string
			for _, l := range n.Links {
				got = append(got, l.Context)
			}
			if tt.name == "long line" {
				c := got[0]
				if len(got) != 1 || !strings.Contains(c, "near [[Target]] after") || len(c) > 2*linkContextBytes+len("[[Target]]") ||
					strings.HasPrefix(c, "ord") || strings.HasSuffix(c, "wor") {
					t.Errorf("context of a link in a long line = %q", got)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("contexts of %q (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

func TestParseLinks(t *testing.T) {
	t.Parallel()
	w := func(target string) Link { return Link{Target: target, Kind: KindWikilink} }
	tests := []struct {
		name string
		src  string
		want []Link
	}{
		{"plain", "see [[Note]] now", []Link{w("Note")}},
		{"folder and .md suffix", "[[Folder/Sub/Note.md]] [[Other.MD]]", []Link{w("Folder/Sub/Note"), w("Other")}},
		{"alias", "[[Note|shown text]]", []Link{{Target: "Note", Alias: "shown text", Kind: KindWikilink}}},
		{"heading", "[[Note#Some Heading]]", []Link{{Target: "Note", Heading: "Some Heading", Kind: KindWikilink}}},
		{"nested heading", "[[Note#A#B]]", []Link{{Target: "Note", Heading: "A#B", Kind: KindWikilink}}},
		{"block", "[[Note#^abc123]]", []Link{{Target: "Note", Block: "abc123", Kind: KindWikilink}}},
		{"heading and alias", "[[Note.md#H|alias]]", []Link{{Target: "Note", Heading: "H", Alias: "alias", Kind: KindWikilink}}},
		{"same-note heading", "[[#Local]]", []Link{{Heading: "Local", Kind: KindWikilink}}},
		{"same-note block", "[[#^blk|x]]", []Link{{Block: "blk", Alias: "x", Kind: KindWikilink}}},
		{"embed", "![[Diagram.png]] ![[Note#Part]]", []Link{
			{Target: "Diagram.png", Embed: true, Kind: KindWikilink},
			{Target: "Note", Heading: "Part", Embed: true, Kind: KindWikilink},
		}},
		{"spaces trimmed", "[[  Spaced Note  |  alias  ]]", []Link{{Target: "Spaced Note", Alias: "alias", Kind: KindWikilink}}},
		{"backslashes", `[[Folder\Note]]`, []Link{w("Folder/Note")}},
		{"table with escaped pipe", "| a | b |\n|---|---|\n| [[Note\\|alias]] | [[Two]] |\n", []Link{
			{Target: "Note", Alias: "alias", Kind: KindWikilink}, w("Two"),
		}},
		{"list items and emphasis", "- [[One]]\n- **[[Two]]**\n  1. _[[Three]]_\n> [[Four]]\n", []Link{w("One"), w("Two"), w("Three"), w("Four")}},
		{"heading text", "## About [[Topic]]\n", []Link{w("Topic")}},
		{"innermost of nested openers", "[[a [[b]]", []Link{w("b")}},
		{"empty and nameless", "[[]] [[ ]] [[|x]] [[#]] [[#^]]", nil},
		{"not across lines", "[[broken\nlink]]", nil},
		{"unclosed", "[[never closed", nil},
		{"fenced code", "```md\n[[InFence]]\n```\n[[After]]", []Link{w("After")}},
		{"tilde fence and info string", "~~~ [[Info]]\n[[Inside]]\n~~~\n", nil},
		{"indented code", "text\n\n    [[Indented]]\n", nil},
		{"inline code", "`[[Span]]` and ``x [[Span2]] y`` and ` [[Span3]] ` but [[Real]]", []Link{w("Real")}},
		{"inline code across lines of a quote", "> `a\n> [[In]]` [[Out]]", []Link{w("Out")}},
		{"code inside the brackets", "[[a `b]]` c]]", nil},
		{"unclosed fence swallows the rest", "```\n[[Hidden]]\n", nil},
		{"markdown links to notes", "[Other](Other%20Note.md) [sec](./Dir/N.md#Part%201) [blk](B.md#^id) ![e](E.md)", []Link{
			{Target: "Other Note", Alias: "Other", Kind: KindWikilink},
			{Target: "Dir/N", Heading: "Part 1", Alias: "sec", Kind: KindWikilink},
			{Target: "B", Block: "id", Alias: "blk", Kind: KindWikilink},
			{Target: "E", Alias: "e", Embed: true, Kind: KindWikilink},
		}},
		{"markdown links elsewhere are not notes", "[w](https://x.com/a.md) [m](mailto:a@b.md) [p](pic.png) [a](#h) [e]() [d](./.md)", nil},
		{"brackets of a wikilink are not a markdown link", "[[a]](b.md) ![[c]](d.md)", []Link{w("a"), {Target: "c", Embed: true, Kind: KindWikilink}}},
		{"markdown link in angle brackets", "[x](<My Note.md>)", []Link{{Target: "My Note", Alias: "x", Kind: KindWikilink}}},
		{"document order across kinds", "[m](M.md) [[W]] [n](N.md)", []Link{
			{Target: "M", Alias: "m", Kind: KindWikilink}, w("W"), {Target: "N", Alias: "n", Kind: KindWikilink},
		}},
		{"clippings markers mean nothing outside topics", "<!-- begin:clippings -->\n[[Clip]]\n<!-- end:clippings -->\n", []Link{w("Clip")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Parse("Notes/n.md", []byte(tt.src), "")
			checkMarkdown(t, n)
			if diff := cmp.Diff(tt.want, n.Links, ignoreContext); diff != "" {
				t.Errorf("Links of %q (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

func TestParseTopicLinks(t *testing.T) {
	t.Parallel()
	const src = "Intro [[Before]]\n\n" +
		"<!-- begin:clippings -->\n- [[Clip One]]\n- ![[Clip Two]] [md](Clip%20Three.md)\n<!-- end:clippings -->\n\n" +
		"Between [[Middle]]\n\n" +
		"```\n<!-- begin:clippings -->\n```\n[[NotInRegion]]\n\n" +
		"<!--begin:clippings-->[[Inline]]<!--  end:clippings  --> [[Outside]]\n\n" +
		"<!-- begin:clippings -->\n[[Open Ended]]\n"
	topic := func(target string) Link { return Link{Target: target, Kind: KindTopic} }
	w := func(target string) Link { return Link{Target: target, Kind: KindWikilink} }
	tests := []struct {
		name string
		path string
		want []Link
	}{
		{"topic note", "99 topics/Gardening.md", []Link{
			w("Before"),
			topic("Clip One"),
			{Target: "Clip Two", Embed: true, Kind: KindTopic},
			{Target: "Clip Three", Alias: "md", Kind: KindTopic},
			w("Middle"), w("NotInRegion"), topic("Inline"), w("Outside"), topic("Open Ended"),
		}},
		{"deeper in the topic folder", "99 topics/sub/Gardening.md", []Link{
			w("Before"),
			topic("Clip One"),
			{Target: "Clip Two", Embed: true, Kind: KindTopic},
			{Target: "Clip Three", Alias: "md", Kind: KindTopic},
			w("Middle"), w("NotInRegion"), topic("Inline"), w("Outside"), topic("Open Ended"),
		}},
		{"other folder", "Notes/Gardening.md", []Link{
			w("Before"), w("Clip One"), {Target: "Clip Two", Embed: true, Kind: KindWikilink},
			{Target: "Clip Three", Alias: "md", Kind: KindWikilink},
			w("Middle"), w("NotInRegion"), w("Inline"), w("Outside"), w("Open Ended"),
		}},
		{"topic folder not at the top", "x/99 topics/Gardening.md", []Link{
			w("Before"), w("Clip One"), {Target: "Clip Two", Embed: true, Kind: KindWikilink},
			{Target: "Clip Three", Alias: "md", Kind: KindWikilink},
			w("Middle"), w("NotInRegion"), w("Inline"), w("Outside"), w("Open Ended"),
		}},
		{"folder match is case-sensitive", "99 Topics/Gardening.md", []Link{
			w("Before"), w("Clip One"), {Target: "Clip Two", Embed: true, Kind: KindWikilink},
			{Target: "Clip Three", Alias: "md", Kind: KindWikilink},
			w("Middle"), w("NotInRegion"), w("Inline"), w("Outside"), w("Open Ended"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Parse(tt.path, []byte(src), "")
			checkMarkdown(t, n)
			if diff := cmp.Diff(tt.want, n.Links, ignoreContext); diff != "" {
				t.Errorf("Links (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseTopicMarkersInCode(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"`<!-- begin:clippings -->`\n[[After]]",
		"[[After]]\n\n```\n<!-- begin:clippings -->",
		"<!-- begin:clippings -->\ntext `<!-- end:clippings -->` [[After]]",
	} {
		want := KindWikilink
		if src[0] == '<' {
			want = KindTopic
		}
		n := Parse("99 topics/t.md", []byte(src), "")
		if len(n.Links) != 1 || n.Links[0].Kind != want {
			t.Errorf("Links of %q = %+v, want one of kind %s", src, n.Links, want)
		}
	}
}
