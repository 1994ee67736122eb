package livesync

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

const passphrase = "correct horse battery staple"

// vaultencDecoder decrypts the vaultenc fixture and vectors.json; PBKDF2 runs
// once for the whole test binary.
var vaultencDecoder = sync.OnceValue(func() *Decoder {
	raw, err := os.ReadFile("testdata/vaultenc.local_sync_parameters.json")
	if err != nil {
		panic(err)
	}
	p, err := ParseSyncParameters(raw)
	if err != nil {
		panic(err)
	}
	return NewDecoder(passphrase, p.PBKDF2Salt)
})

// mustRead reads a file, gunzipping names that end in .gz.
func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			tb.Fatal(err)
		}
		r = gz
	}
	b, err := io.ReadAll(r)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// mustAllDocs returns the docs of an _all_docs?include_docs=true dump.
func mustAllDocs(tb testing.TB, path string) [][]byte {
	tb.Helper()
	var dump struct {
		Rows []struct {
			Doc json.RawMessage `json:"doc"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(mustRead(tb, path), &dump); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	docs := make([][]byte, len(dump.Rows))
	for i, row := range dump.Rows {
		docs[i] = row.Doc
	}
	return docs
}

// mustChanges returns the docs of a _changes?include_docs=true dump, in
// feed order.
func mustChanges(tb testing.TB, path string) [][]byte {
	tb.Helper()
	var dump struct {
		Results []struct {
			Doc json.RawMessage `json:"doc"`
		} `json:"results"`
	}
	if err := json.Unmarshal(mustRead(tb, path), &dump); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	docs := make([][]byte, len(dump.Results))
	for i, row := range dump.Results {
		docs[i] = row.Doc
	}
	return docs
}

// vault is what a test indexer learns from a dump.
type vault struct {
	notes  map[string]Doc // live and soft-deleted notes by path
	chunks ChunkMap
	skips  map[string]string // id → reason
}

func mustDecodeAll(tb testing.TB, d *Decoder, docs [][]byte) vault {
	tb.Helper()
	v := vault{notes: map[string]Doc{}, chunks: ChunkMap{}, skips: map[string]string{}}
	for _, raw := range docs {
		doc, err := d.Decode(raw)
		if err != nil {
			tb.Fatalf("decode %.80s: %v", raw, err)
		}
		switch doc.Kind {
		case KindNote:
			if prev, dup := v.notes[doc.Note.Path]; dup {
				tb.Fatalf("path %q claimed by %s and %s", doc.Note.Path, prev.ID, doc.ID)
			}
			v.notes[doc.Note.Path] = doc
		case KindChunk:
			v.chunks[doc.ID] = doc.Data
		case KindSkip:
			v.skips[doc.ID] = doc.Reason
		default:
			tb.Fatalf("unexpected %v %s in a dump", doc.Kind, doc.ID)
		}
	}
	return v
}

// texts reads every live text note.
func (v vault) texts(tb testing.TB) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for path, doc := range v.notes {
		if doc.Note.Deleted || doc.Note.Binary {
			continue
		}
		b, err := doc.Note.Read(v.chunks)
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		out[path] = string(b)
	}
	return out
}

// follower replays a _changes feed the way a follower would: notes whose
// chunks have not arrived are parked and retried when they do.
type follower struct {
	d       *Decoder
	chunks  ChunkMap
	texts   map[string]string // path → text of live text notes
	binary  map[string]int    // path → size of live binary notes
	idPath  map[string]string
	parked  map[string]*Note // doc id → note waiting for chunks
	waiting map[string]map[string]bool
	// everParked counts notes that had to wait for a chunk.
	everParked int
}

func newFollower(d *Decoder) *follower {
	return &follower{d: d, chunks: ChunkMap{}, texts: map[string]string{}, binary: map[string]int{},
		idPath: map[string]string{}, parked: map[string]*Note{}, waiting: map[string]map[string]bool{}}
}

func (f *follower) apply(tb testing.TB, raw []byte) {
	tb.Helper()
	doc, err := f.d.Decode(raw)
	if err != nil {
		tb.Fatalf("decode %.80s: %v", raw, err)
	}
	switch doc.Kind {
	case KindChunk:
		f.chunks[doc.ID] = doc.Data
		for noteID := range f.waiting[doc.ID] {
			f.try(tb, noteID, f.parked[noteID])
		}
		delete(f.waiting, doc.ID)
	case KindChunkTombstone:
		delete(f.chunks, doc.ID)
	case KindTombstone:
		f.remove(doc.ID)
	case KindNote:
		f.remove(doc.ID)
		if !doc.Note.Deleted {
			f.idPath[doc.ID] = doc.Note.Path
			f.try(tb, doc.ID, doc.Note)
		}
	}
}

func (f *follower) remove(id string) {
	path := f.idPath[id]
	delete(f.texts, path)
	delete(f.binary, path)
	delete(f.idPath, id)
	delete(f.parked, id)
}

func (f *follower) try(tb testing.TB, id string, n *Note) {
	tb.Helper()
	if n == nil {
		return
	}
	b, err := n.Read(f.chunks)
	var missing *MissingChunksError
	switch {
	case errors.As(err, &missing):
		if b != nil {
			tb.Fatalf("%s: bytes returned with missing chunks", n.Path)
		}
		if _, again := f.parked[id]; !again {
			f.everParked++
		}
		f.parked[id] = n
		for _, c := range missing.IDs {
			if f.waiting[c] == nil {
				f.waiting[c] = map[string]bool{}
			}
			f.waiting[c][id] = true
		}
		return
	case err != nil:
		tb.Fatalf("%s: %v", n.Path, err)
	}
	delete(f.parked, id)
	if n.Binary {
		f.binary[n.Path] = len(b)
	} else {
		f.texts[n.Path] = string(b)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// equalTexts reports the first difference between two path → text maps.
func equalTexts(tb testing.TB, got, want map[string]string) {
	tb.Helper()
	for _, p := range sortedKeys(want) {
		g, ok := got[p]
		switch {
		case !ok:
			tb.Errorf("missing %q", p)
		case g != want[p]:
			tb.Errorf("%q: got %d bytes, want %d; got %.60q…", p, len(g), len(want[p]), g)
		}
	}
	for _, p := range sortedKeys(got) {
		if _, ok := want[p]; !ok {
			tb.Errorf("unexpected %q", p)
		}
	}
}
