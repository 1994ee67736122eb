package livesyncput

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vaultask/vaultask/feed/livesync"
	"github.com/vaultask/vaultask/tstest/couchtest"
)

// decodeNote decodes docs with the reader vaultask uses and reassembles the
// note's text from its children.
func decodeNote(t *testing.T, chunks []map[string]any, note map[string]any) (livesync.Doc, string) {
	t.Helper()
	var dec livesync.Decoder
	data := map[string]string{}
	for _, c := range chunks {
		raw, _ := json.Marshal(c)
		d, err := dec.Decode(raw)
		if err != nil || d.Kind != livesync.KindChunk {
			t.Fatalf("chunk %s: kind %v, %v", c["_id"], d.Kind, err)
		}
		if !utf8.ValidString(d.Data) {
			t.Errorf("chunk %s cuts a UTF-8 sequence: %q", d.ID, d.Data)
		}
		data[d.ID] = d.Data
	}
	raw, _ := json.Marshal(note)
	d, err := dec.Decode(raw)
	if err != nil || d.Kind != livesync.KindNote {
		t.Fatalf("note: kind %v, %v", d.Kind, err)
	}
	var text strings.Builder
	for _, id := range d.Note.Children {
		piece, ok := data[id]
		if !ok {
			t.Fatalf("child %s has no chunk", id)
		}
		text.WriteString(piece)
	}
	return d, text.String()
}

// What Docs writes, the feed's own decoder reads back as the same note:
// its path, its id as LiveSync derives it, its text whole, every chunk a
// whole UTF-8 text and repeated content stored once.
func TestDocsReadBackByTheDecoder(t *testing.T) {
	for name, tc := range map[string]struct{ path, text string }{
		"empty":            {"Empty.md", ""},
		"short":            {"Notes/Short note.md", "# Short\n\nOne line.\n"},
		"lines":            {"Long/Lines.md", strings.Repeat("A line of about forty bytes of text.\n", 200)},
		"no line breaks":   {"Long/Runs.md", strings.Repeat("åäö€", 900)},
		"repeated content": {"Repeat.md", strings.Repeat(strings.Repeat("x", 999)+"\n", 3)},
		"underscore":       {"_private/Calculus.md", "# Calculus\n"},
		"upper case":       {"Journal/2026-11-30 Monday.md", "# Monday\n"},
	} {
		t.Run(name, func(t *testing.T) {
			mtime := time.UnixMilli(1764500000000)
			chunks, note := Docs(tc.path, tc.text, mtime)
			d, text := decodeNote(t, chunks, note)
			if text != tc.text {
				t.Fatalf("text read back differs: %d bytes, want %d", len(text), len(tc.text))
			}
			if want := livesync.DocumentID(tc.path, false, ""); d.ID != want {
				t.Errorf("id = %q, want %q", d.ID, want)
			}
			if d.Note.Path != tc.path || d.Note.Size != int64(len(tc.text)) || !d.Note.Mtime.Equal(mtime) || d.Note.Deleted || d.Note.Binary {
				t.Errorf("note = %+v", d.Note)
			}
			ids := map[string]bool{}
			for _, c := range chunks {
				if ids[c["_id"].(string)] {
					t.Errorf("chunk %s written twice", c["_id"])
				}
				ids[c["_id"].(string)] = true
			}
		})
	}
	_, repeated := Docs("R.md", strings.Repeat(strings.Repeat("x", 999)+"\n", 3), time.Now())
	if children := repeated["children"].([]string); len(children) != 3 || children[0] != children[1] {
		t.Errorf("repeated content: children %v, want one chunk three times", children)
	}
}

// FileDocs writes a text file as Docs does and any other file as LiveSync
// writes binaries: a "newnote" whose chunks are base64 pieces, each decoded
// on its own.
func TestFileDocs(t *testing.T) {
	mtime := time.UnixMilli(1764500000000)
	chunks, note := FileDocs("Notes/a.MD", []byte("# A\n"), mtime)
	wantChunks, wantNote := Docs("Notes/a.MD", "# A\n", mtime)
	if !reflect.DeepEqual(chunks, wantChunks) || !reflect.DeepEqual(note, wantNote) {
		t.Errorf("a .MD file: %v %v, want Docs' %v %v", chunks, note, wantChunks, wantNote)
	}
	data := make([]byte, 600<<10)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(data)
	chunks, note = FileDocs("attachments/harvest.png", data, mtime)
	var dec livesync.Decoder
	raw, _ := json.Marshal(note)
	d, err := dec.Decode(raw)
	if err != nil || d.Kind != livesync.KindNote || !d.Note.Binary || d.Note.Type != "newnote" || d.Note.Size != int64(len(data)) {
		t.Fatalf("binary note: %+v, %v", d, err)
	}
	pieces := map[string]string{}
	for _, c := range chunks {
		pieces[c["_id"].(string)] = c["data"].(string)
	}
	var got []byte
	for _, id := range d.Note.Children {
		b, err := base64.StdEncoding.DecodeString(pieces[id])
		if err != nil {
			t.Fatalf("chunk %s: %v", id, err)
		}
		got = append(got, b...)
	}
	if len(d.Note.Children) != 3 || !bytes.Equal(got, data) {
		t.Errorf("%d children, %d bytes read back; want 3 and the file's %d", len(d.Note.Children), len(got), len(data))
	}
}

// CreateVault sets a database up as LiveSync does: the feed reads its
// milestone and sync parameters.
func TestCreateVault(t *testing.T) {
	srv := couchtest.Start(t)
	name := srv.NewDB(t) + "-vault"
	c := &Client{DB: srv.DBURL(name), User: srv.User, Password: srv.Password}
	ctx := context.Background()
	if err := c.CreateVault(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.do(ctx, "DELETE", "", nil, nil) })
	var raw json.RawMessage
	if err := c.do(ctx, "GET", "/_local/obsydian_livesync_milestone", nil, &raw); err != nil {
		t.Fatal(err)
	}
	m, err := livesync.ParseMilestone(raw)
	if err != nil || time.Since(m.Created) > time.Minute || m.Settings.HandleFilenameCaseSensitive {
		t.Errorf("milestone %+v, %v", m, err)
	}
	if err := c.do(ctx, "GET", "/_local/obsidian_livesync_sync_parameters", nil, &raw); err != nil {
		t.Fatal(err)
	}
	if p, err := livesync.ParseSyncParameters(raw); err != nil || len(p.PBKDF2Salt) != 32 {
		t.Errorf("sync parameters %+v, %v", p, err)
	}
	var version map[string]any
	if err := c.do(ctx, "GET", "/obsydian_livesync_version", nil, &version); err != nil || version["version"] != 12.0 {
		t.Errorf("version doc %v, %v", version, err)
	}
}

// Put writes a note the test CouchDB then serves as LiveSync's would: new
// revisions of one document, chunks shared between notes, the metadata
// first when asked; Delete leaves a soft-deleted revision.
func TestPutAndDelete(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	c := &Client{DB: srv.DBURL(db), User: srv.User, Password: srv.Password}
	ctx := context.Background()
	if err := c.CreateVault(ctx); err == nil || !strings.Contains(err.Error(), "412") {
		t.Errorf("CreateVault over an existing database: %v, want a 412 error", err)
	}
	get := func(id string) map[string]any {
		t.Helper()
		var doc map[string]any
		if err := c.do(ctx, "GET", "/"+id, nil, &doc); err != nil {
			t.Fatalf("GET %s: %v", id, err)
		}
		return doc
	}
	if err := c.Put(ctx, "Recipes/Bread.md", "# Bread\n\nKnead it.\n", false); err != nil {
		t.Fatal(err)
	}
	first := get("recipes%2Fbread.md")
	// The same chunk again, in another note: the conflict on it is not an error.
	if err := c.Put(ctx, "Recipes/Copy.md", "# Bread\n\nKnead it.\n", false); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "Recipes/Bread.md", "# Bread\n\nKnead it for ten minutes.\n", true); err != nil {
		t.Fatal(err)
	}
	second := get("recipes%2Fbread.md")
	if first["_rev"] == second["_rev"] || !strings.HasPrefix(second["_rev"].(string), "2-") {
		t.Errorf("revisions %v then %v, want a second revision", first["_rev"], second["_rev"])
	}
	// A note written on a revision another writer replaced meanwhile (a lost
	// race between Put's read and its write) is an error, not a silent no-op.
	if err := c.PutNew(ctx, []Note{{Path: "Recipes/Bread.md", Text: "# Bread\n\nOverwritten.\n"}}); err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("a note over a newer revision: %v, want a conflict error", err)
	}
	for _, id := range second["children"].([]any) {
		get(strings.ReplaceAll(id.(string), ":", "%3A"))
	}
	// A replication cut off before the chunks: only the metadata.
	if err := c.PutMetadata(ctx, "Half.md", "never sent\n"); err != nil {
		t.Fatal(err)
	}
	half := get("half.md")
	var missing map[string]any
	if err := c.do(ctx, "GET", "/"+strings.ReplaceAll(half["children"].([]any)[0].(string), ":", "%3A"), nil, &missing); !isNotFound(err) {
		t.Errorf("the chunk of a metadata-only note: %v, want a 404", err)
	}
	if err := c.Delete(ctx, "Recipes/Bread.md"); err != nil {
		t.Fatal(err)
	}
	gone := get("recipes%2Fbread.md")
	if gone["deleted"] != true || len(gone["children"].([]any)) == 0 {
		t.Errorf("after Delete: %v, want deleted with its children kept", gone)
	}
	if err := c.Delete(ctx, "Never/Written.md"); err == nil || !isNotFound(err) {
		t.Errorf("Delete of a note never written: %v, want a 404", err)
	}
}
