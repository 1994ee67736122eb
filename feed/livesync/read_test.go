package livesync

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func mustNote(tb testing.TB, raw string) *Note {
	tb.Helper()
	doc, err := (&Decoder{}).Decode([]byte(raw))
	if err != nil || doc.Kind != KindNote {
		tb.Fatalf("decode %s: %v %v", raw, doc.Kind, err)
	}
	return doc.Note
}

// countingSource records what Read asks for.
type countingSource struct {
	m     ChunkMap
	calls [][]string
	err   error
}

func (s *countingSource) Chunks(ids []string) (map[string]string, error) {
	s.calls = append(s.calls, ids)
	return s.m, s.err
}

// FORMAT.md §10.1: content is the chunks in order; 112 bytes.
func TestReadTwoChunks(t *testing.T) {
	n := mustNote(t, `{"_id":"notes/shopping list.md","path":"Notes/Shopping List.md","type":"plain",
		"children":["h:1jakh5hr29cfv","h:1r704k6tszjks"],"ctime":1764480000000,"mtime":1764480000000,"size":112,"eden":{}}`)
	src := ChunkMap{
		"h:1jakh5hr29cfv": "# Shopping list\n\nThings to buy on Saturday, before the market closes at noon:\n\n",
		"h:1r704k6tszjks": "- eggs\n- milk\n- [[Bread recipe]]\n",
	}
	b, err := n.Read(src)
	if err != nil || len(b) != 112 || !strings.HasSuffix(string(b), "[[Bread recipe]]\n") {
		t.Errorf("%q, %v", b, err)
	}
}

// §11.2: duplicates are read as often as listed, and asked for once.
func TestReadDuplicateChildren(t *testing.T) {
	n := mustNote(t, `{"_id":"a.md","path":"a.md","type":"plain","children":["h:a","h:b","h:a","h:a"],"size":7}`)
	src := &countingSource{m: ChunkMap{"h:a": "ab", "h:b": "c"}}
	b, err := n.Read(src)
	if err != nil || string(b) != "abcabab" {
		t.Errorf("%q, %v", b, err)
	}
	if !reflect.DeepEqual(src.calls, [][]string{{"h:a", "h:b"}}) {
		t.Errorf("source asked %v, want once for [h:a h:b]", src.calls)
	}
}

// §11.2: empty children is an empty file, and needs no chunk source.
func TestReadEmptyNote(t *testing.T) {
	n := mustNote(t, `{"_id":"empty.md","path":"Empty.md","type":"plain","children":[],"size":0,"eden":{}}`)
	b, err := n.Read(nil)
	if err != nil || len(b) != 0 {
		t.Errorf("%q, %v", b, err)
	}
}

// §4 and §10.2: eden entries come first and need no leaf; entries not in
// children are ignored.
func TestReadEden(t *testing.T) {
	n := mustNote(t, `{"_id":"meeting.md","_rev":"3-x","path":"Meeting.md","type":"plain",
		"children":["h:4yv2xsn1ivw2","h:325jeyvscxhap"],
		"eden":{"h:325jeyvscxhap":{"data":"Decided to ship on Friday.\n","epoch":3},"h:unused":{"data":"zzz","epoch":1}},
		"ctime":1716000000000,"mtime":1716000300000,"size":41}`)
	src := &countingSource{m: ChunkMap{"h:4yv2xsn1ivw2": "Meeting notes\n", "h:325jeyvscxhap": "stale leaf copy\n"}}
	b, err := n.Read(src)
	if err != nil || string(b) != "Meeting notes\nDecided to ship on Friday.\n" {
		t.Errorf("%q, %v", b, err)
	}
	if !reflect.DeepEqual(src.calls, [][]string{{"h:4yv2xsn1ivw2"}}) {
		t.Errorf("source asked %v; eden chunks must not be fetched", src.calls)
	}
}

// §11.1 and §8 step 8: missing chunks are reported, never partial text.
func TestReadMissingChunks(t *testing.T) {
	n := mustNote(t, `{"_id":"a.md","path":"A.md","type":"plain","children":["h:have","h:gone1","h:have","h:gone2","h:gone1"],"size":0}`)
	b, err := n.Read(ChunkMap{"h:have": "text"})
	var missing *MissingChunksError
	if b != nil || !errors.As(err, &missing) || !errors.Is(err, ErrMissingChunks) {
		t.Fatalf("%q, %v", b, err)
	}
	if missing.Path != "A.md" || !reflect.DeepEqual(missing.IDs, []string{"h:gone1", "h:gone2"}) {
		t.Errorf("missing = %+v", missing)
	}
	if _, err := n.Read(nil); !errors.As(err, &missing) || len(missing.IDs) != 3 {
		t.Errorf("nil source: %v", err)
	}
	// The caller fetches the missing ids and reads again.
	b, err = n.Read(ChunkMap{"h:have": "a", "h:gone1": "b", "h:gone2": "c"})
	if err != nil || string(b) != "abacb" {
		t.Errorf("after fetching: %q, %v", b, err)
	}
	many := &MissingChunksError{Path: "p", IDs: strings.Split("a b c d e f g", " ")}
	if got := many.Error(); got != "read p: 7 missing chunks: a, b, c, d, e and 2 more" {
		t.Errorf("Error() = %q", got)
	}
}

func TestReadSourceError(t *testing.T) {
	n := mustNote(t, `{"_id":"a.md","path":"A.md","type":"plain","children":["h:a"]}`)
	boom := errors.New("connection refused")
	if _, err := n.Read(&countingSource{err: boom}); !errors.Is(err, boom) || errors.Is(err, ErrMissingChunks) {
		t.Errorf("%v", err)
	}
}

// §11.18: a size that disagrees with the reassembled bytes (UTF-8, not
// characters) means incomplete or mid-write.
func TestReadSizeMismatch(t *testing.T) {
	src := ChunkMap{"h:a": "Grüße\n"}
	for _, tc := range []struct {
		size int
		ok   bool
	}{{8, true}, {0, true}, {6, false}, {9, false}} {
		n := mustNote(t, `{"_id":"a.md","path":"A.md","type":"plain","children":["h:a"],"size":`+strconv.Itoa(tc.size)+`}`)
		b, err := n.Read(src)
		if tc.ok != (err == nil) || (!tc.ok && (b != nil || !errors.Is(err, ErrSizeMismatch))) {
			t.Errorf("size %d: %q, %v", tc.size, b, err)
		}
	}
}

// §10.7 and §8 step 6: legacy inline data, a string or an array.
func TestReadLegacyInline(t *testing.T) {
	for _, raw := range []string{
		`{"_id":"Old Note.md","_rev":"4-x","type":"notes","data":"# Old note\nwritten before chunking existed\n","ctime":1633000000000,"mtime":1633000500000,"size":43}`,
		`{"_id":"Old Note.md","data":["# Old note\n","written before chunking existed\n"],"size":43}`,
	} {
		n := mustNote(t, raw)
		if !n.Legacy || n.Path != "Old Note.md" {
			t.Fatalf("%+v", n)
		}
		b, err := n.Read(nil)
		if err != nil || string(b) != "# Old note\nwritten before chunking existed\n" {
			t.Errorf("%q, %v", b, err)
		}
	}
	bin := mustNote(t, `{"_id":"dot.png","type":"notes","data":["iVBORw0KGgo=","AAAADUlIRFI="]}`)
	b, err := bin.Read(nil)
	if err != nil || string(b[:8]) != "\x89PNG\r\n\x1a\n" || len(b) != 16 {
		t.Errorf("legacy binary = %q, %v", b, err)
	}
}

// §3: binary chunks are base64 each on their own, padding included.
func TestReadBinaryChunks(t *testing.T) {
	n := mustNote(t, `{"_id":"a.bin","path":"a.bin","type":"newnote","children":["h:1","h:2"],"size":5}`)
	b, err := n.Read(ChunkMap{"h:1": "AQI=", "h:2": "AwQF"})
	if err != nil || string(b) != "\x01\x02\x03\x04\x05" {
		t.Errorf("%q, %v", b, err)
	}
	if _, err := n.Read(ChunkMap{"h:1": "not base64!", "h:2": "AwQF"}); !errors.Is(err, ErrMalformed) {
		t.Errorf("bad base64: %v", err)
	}
}
