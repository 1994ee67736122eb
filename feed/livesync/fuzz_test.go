package livesync

import (
	"errors"
	"strings"
	"testing"
)

// fuzzChunks is the chunk cache FuzzDecode reads notes against.
var fuzzChunks = ChunkMap{"h:1": "text ", "h:2": "AQI=", "h:+3": "more"}

func addSeedDocs(f *testing.F) {
	for _, name := range []string{"vault.all_docs.json", "vaultenc.all_docs.json"} {
		for _, raw := range mustAllDocs(f, "testdata/"+name) {
			f.Add(raw)
		}
	}
	v := mustVectors(f)
	for _, raw := range append(v.V1Vault, v.V2Eden...) {
		f.Add([]byte(raw))
	}
	for _, s := range []string{
		`{"_id":"a.md","path":"a.md","type":"plain","children":["h:1","h:2","h:1"],"size":10,"eden":{"h:2":{"data":"x"}}}`,
		`{"_id":"Old.md","data":["a","b"]}`,
		`{"_id":"x.png","type":"newnote","children":["h:2"],"size":2}`,
		`{"_id":"h:z","type":"leaf","data":"\u000eLZ\u001d~S87PLShKLS7OTMpJVSCDwwUA"}`,
		`{"_id":"f:1","path":"/\\:%=AAAA","type":"plain","children":[]}`,
		`{"_id":"x","_deleted":true}`,
	} {
		f.Add([]byte(s))
	}
}

// FuzzDecode: Decode never panics, and a note either reads completely, with
// its stated size, or says why not; never bytes with an error.
func FuzzDecode(f *testing.F) {
	addSeedDocs(f)
	keyless := &Decoder{}
	keyed := vaultencDecoder()
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, d := range []*Decoder{keyless, keyed} {
			doc, err := d.Decode(raw)
			if err != nil || doc.Kind != KindNote {
				continue
			}
			n := doc.Note
			if n.Path == "" || strings.Contains(n.Path, ":") {
				t.Fatalf("note with path %q", n.Path)
			}
			b, err := n.Read(fuzzChunks)
			var missing *MissingChunksError
			switch {
			case err == nil:
				if n.Deleted {
					t.Fatal("soft-deleted note read")
				}
				if n.Size != 0 && int64(len(b)) != n.Size {
					t.Fatalf("read %d bytes, size %d", len(b), n.Size)
				}
			case b != nil:
				t.Fatalf("bytes returned with %v", err)
			case errors.As(err, &missing):
				if len(missing.IDs) == 0 {
					t.Fatal("missing chunks without ids")
				}
				for _, id := range missing.IDs {
					if _, cached := fuzzChunks[id]; cached {
						t.Fatalf("cached chunk %s reported missing", id)
					}
				}
			}
		}
	})
}

// FuzzDecrypt: ciphertext parsing never panics and never returns text
// together with an error.
func FuzzDecrypt(f *testing.F) {
	v := mustVectors(f)
	for _, s := range []string{v.V1.Cipher, v.Legacy.Cipher, "%~ddd35704b824765901296a21xi/lryj6A5QY+c/NkPSROop1p/POZ5EBQYRLkoGSHQ==",
		"%=dsrDW/PT0JLoCdUrmERj0K0acjr2mCzn0cnZ1sWlZ3G8/PPrB2bTL/qRUOisBPsrBRoXIqbt9ipY5acF65Xk+qniS0oQvOquXdbjekz35VltSh6y",
		`["a","b","c"]`, "%", "%=", "\u000eLZ\u001d~AAAA"} {
		f.Add(s)
	}
	d := vaultencDecoder()
	f.Fuzz(func(t *testing.T, s string) {
		if plain, err := d.decrypt(s); err != nil && plain != "" {
			t.Fatalf("%q with %v", plain, err)
		}
		if out, err := inflate(s); err != nil && out != "" {
			t.Fatalf("%q with %v", out, err)
		}
	})
}
