package livesync

import (
	"errors"
	"strconv"
	"testing"
)

// Classification of every document kind in FORMAT.md §1 (row numbers in the
// names), plus the path rules of §2 and the skips of §7 and §11.
func TestDecodeClassifies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		doc    string
		kind   Kind
		reason string
		path   string // for KindNote
		err    error
	}{
		{"1 tombstone of a note keeps only its id", `{"_id":"notes/a.md","_rev":"3-x","_deleted":true}`, KindTombstone, "", "", nil},
		{"1 tombstone written by a full PUT", `{"_id":"notes/a.md","_deleted":true,"deleted":true,"path":"Notes/A.md","type":"plain","children":["h:1"]}`, KindTombstone, "", "", nil},
		{"1 tombstone of a chunk (GC V3)", `{"_id":"h:1crg7i7hmbqb2","_deleted":true,"type":"leaf","data":"x"}`, KindChunkTombstone, "", "", nil},
		{"1 tombstone of a chunk with no body", `{"_id":"h:+abc","_rev":"2-y","_deleted":true}`, KindChunkTombstone, "", "", nil},
		{"1 tombstone of a 0.25.6 leaf without h:", `{"_id":"3km4kmd7ucedk","_deleted":true,"type":"leaf"}`, KindChunkTombstone, "", "", nil},
		{"1 tombstone of a hidden file", `{"_id":"i:.obsidian/app.json","_deleted":true}`, KindSkip, "tombstone of hidden-file document", "", nil},
		{"2 design doc", `{"_id":"_design/chunks","views":{}}`, KindSkip, "design document", "", nil},
		{"2 design doc is checked before leaf", `{"_id":"_design/x","type":"leaf","data":"x"}`, KindSkip, "design document", "", nil},
		{"2 tombstone of a design doc", `{"_id":"_design/chunks","_deleted":true}`, KindSkip, "tombstone of design document", "", nil},
		{"3 local doc", `{"_id":"_local/obsydian_livesync_milestone","type":"milestoneinfo"}`, KindSkip, "reserved document", "", nil},
		{"4 version doc", `{"_id":"obsydian_livesync_version","version":12,"type":"versioninfo"}`, KindSkip, "version document", "", nil},
		{"5 sync info", `{"_id":"syncinfo","type":"syncinfo","data":"abcdefghijklmnopqrstuvwxyzabcd"}`, KindSkip, "sync-info document", "", nil},
		{"5 encrypted sync info needs the passphrase", `{"_id":"syncinfo","type":"syncinfo","e_":true,"data":"%=AAAA"}`, KindSkip, "sync-info document", "", ErrEncrypted},
		{"6 leaf", `{"_id":"h:1crg7i7hmbqb2","type":"leaf","data":"Limits and derivatives.\n"}`, KindChunk, "", "", nil},
		{"6 leaf without h: (0.25.6 bug)", `{"_id":"1crg7i7hmbqb2","type":"leaf","data":"x"}`, KindChunk, "", "", nil},
		{"6 encrypted leaf needs the passphrase", `{"_id":"h:+3dm0hpfuco66d","type":"leaf","e_":true,"data":"%=AAAA"}`, KindChunk, "", "", ErrEncrypted},
		{"6 markdown comment is not encryption", `{"_id":"h:abc","type":"leaf","data":"%%comment%% and more"}`, KindChunk, "", "", nil},
		{"7 chunk pack", `{"_id":"cp:1","type":"chunkpack","data":"x"}`, KindSkip, "chunk pack (unsupported)", "", nil},
		{"8 hidden file", `{"_id":"i:.obsidian/app.json","path":"i:.obsidian/app.json","type":"plain","children":[]}`, KindSkip, "hidden-file document", "", nil},
		{"8 hidden file, obfuscated", `{"_id":"i:f:4a1b","path":"i:.obsidian/app.json","type":"newnote","children":[]}`, KindSkip, "hidden-file document", "", nil},
		{"9 customisation sync ending in .md", `{"_id":"ix:dev/snippets/a.md","path":"ix:dev/snippets/a.md","type":"plain","children":[]}`, KindSkip, "customisation-sync document", "", nil},
		{"10 plugin sync", `{"_id":"ps:plugin.json","type":"plugin","data":"{}"}`, KindSkip, "plugin-sync document", "", nil},
		{"11 encrypted metadata needs the passphrase", `{"_id":"f:b422","path":"/\\:%=AAAA","type":"plain","children":[],"ctime":0,"mtime":0,"size":0}`, KindNote, "", "", ErrEncrypted},
		{"12 V1 obfuscated path needs the passphrase", `{"_id":"f:b422","path":"%931636970d4bc03e843d02f0d7f6cc4cdcdcf2a062af7b8c259e3af73edb64c8v7zdTqKnYzWgW6+ry1dHkPT8aMQJtIg2WwNu3aKXalrIow==","type":"plain","children":[]}`, KindNote, "", "", ErrEncrypted},
		{"12 0.18–0.20 JSON-array path needs the passphrase", `{"_id":"f:b422","path":"[\"AAAA\",\"00\",\"00\"]","type":"plain","children":[]}`, KindNote, "", "", ErrEncrypted},
		{"13 obfuscated id, plaintext path", `{"_id":"f:b422","path":"Notes/A.md","type":"plain","children":["h:1"]}`, KindNote, "", "Notes/A.md", nil},
		{"13 obfuscated id without path", `{"_id":"f:b422","type":"plain","children":[]}`, KindSkip, "obfuscated id without a path", "", nil},
		{"14 chunked note", `{"_id":"notes/a.md","path":"Notes/A.md","type":"plain","children":["h:1","h:1"]}`, KindNote, "", "Notes/A.md", nil},
		{"14 chunked note without children", `{"_id":"notes/a.md","path":"Notes/A.md","type":"plain"}`, KindSkip, "plain document without children", "", nil},
		{"14 plain note whose children need the passphrase", `{"_id":"journal/a.md","path":"Journal/A.md","type":"plain","children":["h:+1covuk25a3uab"]}`, KindNote, "", "", ErrEncrypted},
		{"15 legacy notes doc", `{"_id":"Old Note.md","type":"notes","data":"# Old\n"}`, KindNote, "", "Old Note.md", nil},
		{"15 legacy doc without type", `{"_id":"Older.md","data":["a","b"]}`, KindNote, "", "Older.md", nil},
		{"15 legacy doc with nothing in it", `{"_id":"Empty.md"}`, KindSkip, "document without type, children or data", "", nil},
		{"16 unknown type", `{"_id":"x","type":"milestoneinfo"}`, KindSkip, `unknown type "milestoneinfo"`, "", nil},
		{"§2 id escaped with /, path field", `{"_id":"/_private/calculus.md","path":"_private/Calculus.md","type":"plain","children":[]}`, KindNote, "", "_private/Calculus.md", nil},
		{"§2 id escaped with /, no path field", `{"_id":"/_Private.md","type":"notes","data":"x"}`, KindNote, "", "_Private.md", nil},
		{"§2 old id with a prefix", `{"_id":"Work:/Plan.md","type":"notes","data":"x"}`, KindNote, "", "Plan.md", nil},
		{"§1 path with ':'", `{"_id":"a:b.md","path":"a:b.md","type":"plain","children":[]}`, KindSkip, "path contains ':'", "", nil},
		{"§1 id with ':' and no path", `{"_id":"Work:Plan.md","type":"notes","data":"x"}`, KindSkip, "path contains ':'", "", nil},
		{"§2 id that gives an empty path", `{"_id":"/","type":"notes","data":"x"}`, KindSkip, "empty path", "", nil},
		{"§1 reserved id", `{"_id":"_users","type":"plain","children":[]}`, KindSkip, "reserved document", "", nil},
		{"§1 chunk id on a note", `{"_id":"h:abc","type":"plain","children":[]}`, KindSkip, "chunk id on a non-leaf document", "", nil},
		{"§1 red flag", `{"_id":"redflag.md","path":"redflag.md","type":"plain","children":[]}`, KindSkip, "flag or log file", "", nil},
		{"§1 fetch flag", `{"_id":"flag_fetch.md","path":"flag_fetch.md","type":"plain","children":[]}`, KindSkip, "flag or log file", "", nil},
		{"§1 log file", `{"_id":"livesync_log_2024.md","path":"livesync_log_2024.md","type":"plain","children":[]}`, KindSkip, "flag or log file", "", nil},
		{"§1 upper-case log file", `{"_id":"livesync_log_x.md","path":"LIVESYNC_LOG_x.md","type":"plain","children":[]}`, KindSkip, "flag or log file", "", nil},
		{"§1 a flag name in a folder is a note", `{"_id":"a/redflag.md","path":"a/redflag.md","type":"plain","children":[]}`, KindNote, "", "a/redflag.md", nil},
		{"§11.22 non-NFC path is kept as is", `{"_id":"cafe\u0301.md","path":"Cafe\u0301.md","type":"plain","children":[]}`, KindNote, "", "Cafe\u0301.md", nil},
		{"malformed JSON", `{"_id":`, KindSkip, "", "", ErrMalformed},
		{"not an object", `[1,2]`, KindSkip, "", "", ErrMalformed},
		{"no id", `{"type":"leaf","data":"x"}`, KindSkip, "", "", ErrMalformed},
		{"leaf data not a string", `{"_id":"h:1","type":"leaf","data":["x"]}`, KindChunk, "", "", ErrMalformed},
		{"legacy data of the wrong type", `{"_id":"Old.md","type":"notes","data":5}`, KindNote, "", "", ErrMalformed},
		{"field of the wrong type", `{"_id":"a.md","type":"plain","children":"h:1"}`, KindSkip, "", "", ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := (&Decoder{}).Decode([]byte(tc.doc))
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if doc.Kind != tc.kind || doc.Reason != tc.reason {
				t.Errorf("got %v %q, want %v %q", doc.Kind, doc.Reason, tc.kind, tc.reason)
			}
			if err == nil && tc.kind == KindNote && (doc.Note == nil || doc.Note.Path != tc.path) {
				t.Errorf("note = %+v, want path %q", doc.Note, tc.path)
			}
			if tc.err == ErrEncrypted && !doc.E2EE {
				t.Error("E2EE not reported")
			}
		})
	}
}

// Every E2EE marker of FORMAT.md §5 is detected on its own, and nothing else.
func TestDetectE2EE(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want bool
	}{
		{`{"_id":"h:+1covuk25a3uab","type":"leaf","data":"x"}`, true},
		{`{"_id":"a.md","path":"a.md","type":"plain","children":["h:1","h:+2"]}`, true},
		{`{"_id":"syncinfo","type":"syncinfo","e_":true,"data":"x"}`, true},
		{`{"_id":"a.md","path":"a.md","type":"plain","children":[],"eden":{"h:++encrypted":{"data":"%x","epoch":999999}}}`, true},
		{`{"_id":"a.md","path":"a.md","type":"plain","children":[],"eden":{"h:++encrypted-hkdf":{"data":"%=x","epoch":999999}}}`, true},
		{`{"_id":"f:1","path":"/\\:%=x","type":"plain","children":[]}`, true},
		{`{"_id":"f:1","path":"%` + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdefAAAA" + `","type":"plain","children":[]}`, true},
		{`{"_id":"f:1","path":"[\"a\",\"b\",\"c\"]","type":"plain","children":[]}`, true},
		{`{"_id":"h:1","type":"leaf","data":"%%comment%% starts this chunk"}`, false},
		{`{"_id":"%short.md","path":"%short.md","type":"plain","children":[]}`, false},
		{`{"_id":"f:1","path":"Notes/A.md","type":"plain","children":["h:1"]}`, false},
		{`{"_id":"syncinfo","type":"syncinfo","data":"abc"}`, false},
		{`not json`, false},
	} {
		if got := DetectE2EE([]byte(tc.doc)); got != tc.want {
			t.Errorf("DetectE2EE(%s) = %v, want %v", tc.doc, got, tc.want)
		}
	}
	if !DetectE2EE([]byte(`{"_id":"a"}`), []byte(`{"_id":"h:+b","type":"leaf","data":"x"}`)) {
		t.Error("a marker in the second document is not found")
	}
}

// Note metadata: times, size, soft delete, type and the text/binary rule.
func TestDecodeNoteMetadata(t *testing.T) {
	doc, err := (&Decoder{}).Decode([]byte(`{"_id":"empty.md","_rev":"2-250e","path":"Empty.md","type":"plain",
		"children":[],"ctime":1796015337322,"mtime":1796015354040,"size":0,"eden":{},"deleted":true}`))
	if err != nil {
		t.Fatal(err)
	}
	n := doc.Note
	if doc.Rev != "2-250e" || !n.Deleted || n.Ctime.UnixMilli() != 1796015337322 || n.Mtime.UnixMilli() != 1796015354040 || n.Eden != nil || n.Binary {
		t.Errorf("%+v %+v", doc, n)
	}
	for _, tc := range []struct {
		typ, path string
		binary    bool
	}{
		{"plain", "a.md", false},
		{"plain", "a.bin", false},      // type plain is text whatever the name
		{"newnote", "a.md", false},     // 2021 .md stored as newnote
		{"newnote", "a.canvas", false}, // extension list of the plugin
		{"newnote", "a.png", true},
		{"newnote", "a.MD", true}, // the list is case-sensitive
		{"notes", "a.txt", false},
		{"notes", "a.jpg", true},
	} {
		raw := `{"_id":"x","path":"` + tc.path + `","type":"` + tc.typ + `","children":[]}`
		if tc.typ == "notes" {
			raw = `{"_id":"x","path":"` + tc.path + `","type":"notes","data":""}`
		}
		doc, err := (&Decoder{}).Decode([]byte(raw))
		if err != nil || doc.Note.Binary != tc.binary {
			t.Errorf("%s %s: binary %v, err %v; want binary %v", tc.typ, tc.path, doc.Note != nil && doc.Note.Binary, err, tc.binary)
		}
	}
}

func TestDecodeVersion(t *testing.T) {
	for _, v := range []int{10, 12, 13} {
		doc, err := (&Decoder{}).Decode([]byte(`{"_id":"obsydian_livesync_version","type":"versioninfo","version":` + strconv.Itoa(v) + `}`))
		if err != nil || doc.Kind != KindSkip || doc.Version != v {
			t.Errorf("version %d: %+v, %v", v, doc, err)
		}
	}
}

func TestKindString(t *testing.T) {
	if KindChunkTombstone.String() != "chunk tombstone" || Kind(42).String() != "Kind(42)" {
		t.Error(KindChunkTombstone.String(), Kind(42).String())
	}
}

// §6 and §11.3–4 through a follower's _id → path map: a soft delete hides
// the note, a later revision re-creates it, a tombstone without a path
// removes it, and a chunk tombstone evicts the chunk so the next read reports
// it missing.
func TestDeleteRecreateTombstone(t *testing.T) {
	f := newFollower(&Decoder{})
	step := func(raw string, want map[string]string) {
		t.Helper()
		f.apply(t, []byte(raw))
		equalTexts(t, f.texts, want)
	}
	step(`{"_id":"h:1","type":"leaf","data":"hello\n"}`, map[string]string{})
	step(`{"_id":"a.md","_rev":"1-a","path":"A.md","type":"plain","children":["h:1"],"size":6}`, map[string]string{"A.md": "hello\n"})
	step(`{"_id":"a.md","_rev":"2-b","path":"A.md","type":"plain","children":["h:1"],"size":6,"deleted":true}`, map[string]string{})
	step(`{"_id":"a.md","_rev":"3-c","path":"A.md","type":"plain","children":["h:1"],"size":6}`, map[string]string{"A.md": "hello\n"})
	step(`{"_id":"a.md","_rev":"4-d","_deleted":true}`, map[string]string{})
	step(`{"_id":"h:1","_rev":"2-e","_deleted":true}`, map[string]string{})
	step(`{"_id":"b.md","_rev":"1-f","path":"B.md","type":"plain","children":["h:1"],"size":6}`, map[string]string{})
	if f.parked["b.md"] == nil {
		t.Error("note whose chunk was evicted is not parked")
	}
	step(`{"_id":"h:1","_rev":"3-g","type":"leaf","data":"hello\n"}`, map[string]string{"B.md": "hello\n"})
}
