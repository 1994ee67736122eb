package livesync

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// §3 and §11.11: compressed chunks inflate to what was written.
func TestDecodeCompressedChunk(t *testing.T) {
	v := mustVectors(t)
	for _, tc := range []struct {
		name, data, want string
	}{
		// FORMAT.md §10.8, written with the plugin's fflate.
		{"text", "\u000eLZ\u001dS87PLShKLS7OTMpJVSCDwwUA", strings.TrimSuffix(strings.Repeat("compressible ", 5), " ") + "\n"},
		{"binary, re-encoded as base64", v.CompressedBinary.Data, v.CompressedBinary.Plain},
		{"latin-1 variant of 2024-04-19", v.CompressedLatin1.Data, v.CompressedLatin1.Plain},
		{"empty", "\u000eLZ\u001d", ""},
		{"empty binary", "\u000eLZ\u001d~", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(map[string]any{"_id": "h:z", "type": "leaf", "data": tc.data})
			if err != nil {
				t.Fatal(err)
			}
			doc, err := (&Decoder{}).Decode(raw)
			if err != nil || doc.Kind != KindChunk || doc.Data != tc.want {
				t.Errorf("got %q, %v; want %q", doc.Data, err, tc.want)
			}
		})
	}
	for _, bad := range []string{"\u000eLZ\u001d!!!", "\u000eLZ\u001dAAAA", "\u000eLZ\u001d%\u0100"} {
		raw, _ := json.Marshal(map[string]any{"_id": "h:z", "type": "leaf", "data": bad})
		if _, err := (&Decoder{}).Decode(raw); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v, want ErrMalformed", bad, err)
		}
	}
}

// A compressed chunk reads back into the note through the cache, binary too.
func TestReadCompressedBinary(t *testing.T) {
	v := mustVectors(t)
	raw, _ := json.Marshal(map[string]any{"_id": "h:png", "type": "leaf", "data": v.CompressedBinary.Data})
	doc, err := (&Decoder{}).Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	n := mustNote(t, `{"_id":"p.png","path":"p.png","type":"newnote","children":["h:png"],"size":66}`)
	b, err := n.Read(ChunkMap{doc.ID: doc.Data})
	if err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Errorf("%q, %v", b, err)
	}
}

// §11.17: the 0.20.x binary encoding, "%" on the first piece only.
func TestDecodeUTF16Binary(t *testing.T) {
	v := mustVectors(t)
	got, err := decodeBinary(v.UTF16Binary.Pieces)
	want, _ := decodeBase64(v.UTF16Binary.Plain)
	if err != nil || string(got) != string(want) {
		t.Errorf("%q, %v; want %q", got, err, want)
	}
	if _, err := decodeBinary([]string{"%ok", "\u4e00"}); !errors.Is(err, ErrMalformed) {
		t.Errorf("code unit outside the table: %v", err)
	}
	n := mustNote(t, `{"_id":"old.png","type":"notes","data":`+mustJSON(t, v.UTF16Binary.Pieces)+`,"size":66}`)
	b, err := n.Read(nil)
	if err != nil || string(b) != string(want) {
		t.Errorf("legacy UTF-16 note: %v", err)
	}
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
