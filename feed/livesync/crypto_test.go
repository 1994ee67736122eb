package livesync

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

// vectors is testdata/vectors.json, written by testdata/vectors.mjs with
// WebCrypto and zlib the way the plugin's writers do.
type vectors struct {
	V1               plainVector       `json:"v1"`
	V1Dynamic        plainVector       `json:"v1Dynamic"`
	Legacy           plainVector       `json:"legacy"`
	V1Vault          []json.RawMessage `json:"v1Vault"`
	V2Eden           []json.RawMessage `json:"v2Eden"`
	CompressedBinary struct {
		Data  string `json:"data"`
		Plain string `json:"plain"`
	} `json:"compressedBinary"`
	CompressedLatin1 struct {
		Data  string `json:"data"`
		Plain string `json:"plain"`
	} `json:"compressedLatin1"`
	UTF16Binary struct {
		Pieces []string `json:"pieces"`
		Plain  string   `json:"plain"`
	} `json:"utf16Binary"`
	Lower map[string]string `json:"lower"`
}

type plainVector struct {
	Cipher string `json:"cipher"`
	Plain  string `json:"plain"`
}

func mustVectors(tb testing.TB) vectors {
	tb.Helper()
	var v vectors
	if err := json.Unmarshal(mustRead(tb, "testdata/vectors.json"), &v); err != nil {
		tb.Fatal(err)
	}
	return v
}

// Ciphertexts of every format, from the real fixtures, octagonal-wheels' own
// tests (encryption.test.ts) and vectors.json.
func TestDecrypt(t *testing.T) {
	v := mustVectors(t)
	for _, tc := range []struct {
		name, passphrase, cipher, plain string
	}{
		// Real chunk written by the 0.25.70 CLI (FORMAT.md §10.5).
		{"V2 real chunk", passphrase, "%=dsrDW/PT0JLoCdUrmERj0K0acjr2mCzn0cnZ1sWlZ3G8/PPrB2bTL/qRUOisBPsrBRoXIqbt9ipY5acF65Xk+qniS0oQvOquXdbjekz35VltSh6y", "Limits and derivatives.\n"},
		{"V1 octagonal-wheels", "passwordTest", "%ae62aa26d34338a54d41d40601000000e05454c7b864c044ccc5b8c769d8e950L6f25sLek+g+C+1eKHgLrlffdrr0ABFC6B6g7uI=", "encryptedData"},
		{"V1 obfuscated path, octagonal-wheels", "passwordTest", "%931636970d4bc03e843d02f0d7f6cc4cdcdcf2a062af7b8c259e3af73edb64c8v7zdTqKnYzWgW6+ry1dHkPT8aMQJtIg2WwNu3aKXalrIow==", "/path/to/obfuscate"},
		{"V3 octagonal-wheels", "password", "%~ddd35704b824765901296a21xi/lryj6A5QY+c/NkPSROop1p/POZ5EBQYRLkoGSHQ==", "fancy-syncying!"},
		{"V1 vector", passphrase, v.V1.Cipher, v.V1.Plain},
		{"V1 dynamic iteration count", passphrase, v.V1Dynamic.Cipher, v.V1Dynamic.Plain},
		{"legacy JSON array", passphrase, v.Legacy.Cipher, v.Legacy.Plain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := vaultencDecoder()
			if tc.passphrase != passphrase {
				d = NewDecoder(tc.passphrase, nil)
			}
			got, err := d.decrypt(tc.cipher)
			if err != nil || got != tc.plain {
				t.Fatalf("decrypt = %q, %v; want %q", got, err, tc.plain)
			}
			wrong := NewDecoder(tc.passphrase+"!", vaultencDecoder().keys.salt)
			if got, err := wrong.decrypt(tc.cipher); !errors.Is(err, ErrWrongPassphrase) || got != "" {
				t.Errorf("wrong passphrase: %q, %v", got, err)
			}
		})
	}
}

// FORMAT.md §10.5, constructed with the real library and its own salt.
func TestDecryptOtherSalt(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("l2n0liNnx6dhkzAKHylQDCpmaoQYWbdBVbRpkP1DekQ=")
	d := NewDecoder(passphrase, salt)
	doc, err := d.Decode([]byte(`{"_id":"h:+1covuk25a3uab","_rev":"1-x","type":"leaf","e_":true,
		"data":"%=RiS3OeeJ1rq673TbHmdNmDMCNjxViK8DYHWycgDUFqOcu/c5T/NeehqM/ZhzstbgRc4Q9D4JPTRn13IRPQE3L8o2M1dsfEXnfV2GijMzxN4="}`))
	if err != nil || doc.Kind != KindChunk || doc.Data != "Secret diary entry.\n" {
		t.Errorf("%+v, %v", doc, err)
	}
	// The same chunk under vaultenc's salt does not authenticate.
	if _, err := vaultencDecoder().decrypt(`%=RiS3OeeJ1rq673TbHmdNmDMCNjxViK8DYHWycgDUFqOcu/c5T/NeehqM/ZhzstbgRc4Q9D4JPTRn13IRPQE3L8o2M1dsfEXnfV2GijMzxN4=`); !errors.Is(err, ErrWrongPassphrase) {
		t.Errorf("other salt: %v", err)
	}
}

func TestDecryptMalformed(t *testing.T) {
	d := vaultencDecoder()
	for _, s := range []string{
		"plain text", "%=", "%=!!!!", "%=" + base64.StdEncoding.EncodeToString(make([]byte, 40)),
		"%abc", "%" + strings.Repeat("zz", 32) + "AAAA", "%" + strings.Repeat("00", 32) + "AA",
		"%~short", "%~" + strings.Repeat("00", 12) + "!!", "[1,2]", `["a","b"]`, `["AAAAAAAAAAAAAAAAAAAAAA==","","00"]`, "[",
	} {
		if got, err := d.decrypt(s); !errors.Is(err, ErrMalformed) || got != "" {
			t.Errorf("decrypt(%q) = %q, %v; want ErrMalformed", s, got, err)
		}
	}
}

// PBKDF2 runs once per Decoder however many documents it decrypts.
func TestKeysDerivedOnce(t *testing.T) {
	d := vaultencDecoder()
	docs := mustAllDocs(t, "testdata/vaultenc.all_docs.json")
	if _, err := d.Decode(docs[1]); err != nil {
		t.Fatal(err)
	}
	master := &d.keys.master[0]
	for _, raw := range docs {
		if _, err := d.Decode(raw); err != nil {
			t.Fatal(err)
		}
	}
	if &d.keys.master[0] != master {
		t.Error("master key derived again")
	}
	v := mustVectors(t)
	for range 3 {
		if _, err := d.decrypt(v.V1.Cipher); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.keys.v1) == 0 {
		t.Error("V1 key not cached")
	}
}

func TestDynamicIterations(t *testing.T) {
	for _, tc := range []struct {
		passphrase string
		want       int
	}{
		{"", 15*1000 + 121 - 15},
		{"passwordTest", 3*1000 + 121 - 3},
		{passphrase, 121 + 13},
		{"passwordTestあaあああ", 121 + 2}, // 17 UTF-16 code units
		{"😀😀😀😀😀😀😀", 1000 + 121 - 1},    // 14 code units: surrogate pairs count twice
	} {
		if got := dynamicIterations(tc.passphrase); got != tc.want {
			t.Errorf("dynamicIterations(%q) = %d, want %d", tc.passphrase, got, tc.want)
		}
	}
}

// A 0.18–0.24 vault: V1 and JSON-array paths, plaintext children, an eden
// wrapped with h:++encrypted, chunks without e_.
func TestV1Vault(t *testing.T) {
	v := mustVectors(t)
	d := vaultencDecoder()
	docs := make([][]byte, len(v.V1Vault))
	for i, raw := range v.V1Vault {
		docs[i] = raw
	}
	if !DetectE2EE(docs[2]) {
		t.Error("V1 chunk without e_ not detected by its h:+ id")
	}
	if _, err := (&Decoder{}).Decode(docs[0]); !errors.Is(err, ErrEncrypted) {
		t.Errorf("without passphrase: %v", err)
	}
	got := mustDecodeAll(t, d, docs)
	n := got.notes["Journal/2024-05-01.md"]
	if n.Note == nil || !n.Note.Encrypted || n.Note.Eden["h:+v1eden"] == "" || n.Note.Size != 58 || n.Note.Mtime.UnixMilli() != 1714525200000 {
		t.Fatalf("notes = %v, V1 note = %+v", sortedKeys(got.notes), n.Note)
	}
	if DocumentID("Journal/2024-05-01.md", false, passphrase) != n.ID {
		t.Error("obfuscated id does not match the decrypted path")
	}
	if n2 := got.notes["Journal/2024-05-02.md"]; n2.Note == nil || n2.Note.Eden != nil || !n2.Note.Encrypted {
		t.Errorf("JSON-array path note = %+v", n2.Note)
	}
	equalTexts(t, got.texts(t), map[string]string{
		"Journal/2024-05-01.md": "Secret diary entry.\nWritten on the train, not yet a leaf.\n",
		"Journal/2024-05-02.md": "Secret diary entry.\n",
	})
}

// E2EE V2 without obfuscation: plaintext path, an eden wrapped with
// h:++encrypted-hkdf, a chunk compressed before it was encrypted.
func TestV2EdenAndCompressedChunk(t *testing.T) {
	v := mustVectors(t)
	docs := make([][]byte, len(v.V2Eden))
	for i, raw := range v.V2Eden {
		docs[i] = raw
	}
	got := mustDecodeAll(t, vaultencDecoder(), docs)
	if n := got.notes["Meeting.md"].Note; n == nil || !n.Encrypted || n.Obfuscated || len(n.Eden) != 1 {
		t.Fatalf("note = %+v", n)
	}
	if c := got.chunks["h:+v2z"]; !strings.HasPrefix(c, "compressible compressible") {
		t.Errorf("chunk = %.40q", c)
	}
	equalTexts(t, got.texts(t), map[string]string{
		"Meeting.md": strings.Repeat("compressible ", 40) + "\nWritten on the train, not yet a leaf.\n",
	})
}

// Metadata that decrypts but is not what the writer puts there.
func TestDecodeBadEncryptedMetadata(t *testing.T) {
	d := vaultencDecoder()
	notJSON := mustEncryptV2(t, "not json")
	for _, raw := range []string{
		`{"_id":"f:1","path":"/\\:` + notJSON + `","type":"plain","children":[]}`,
		`{"_id":"a.md","path":"a.md","type":"plain","children":[],"eden":{"h:++encrypted-hkdf":{"data":"` + notJSON + `"}}}`,
	} {
		if _, err := d.Decode([]byte(raw)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", raw, err)
		}
	}
	empty := mustEncryptV2(t, `{"mtime":1}`)
	doc, err := d.Decode([]byte(`{"_id":"f:1","path":"/\\:` + empty + `","type":"plain","children":[]}`))
	if err != nil || doc.Kind != KindSkip || doc.Reason != "obfuscated id without a path" {
		t.Errorf("metadata without path: %+v, %v", doc, err)
	}
}

// mustEncryptV2 encrypts with vaultencDecoder's master key, so tests can
// shape plaintexts; the decryption itself is checked on real ciphertext.
func mustEncryptV2(tb testing.TB, plain string) string {
	tb.Helper()
	master, err := vaultencDecoder().keys.masterKey()
	if err != nil {
		tb.Fatal(err)
	}
	header := make([]byte, v2IVLen+v2SaltLen)
	rand.Read(header)
	key, err := hkdf.Key(sha256.New, master, header[v2IVLen:], "", 32)
	if err != nil {
		tb.Fatal(err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		tb.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		tb.Fatal(err)
	}
	return "%=" + base64.StdEncoding.EncodeToString(aead.Seal(header, header[:v2IVLen], []byte(plain), nil))
}

// §5: the sync-info document proves the passphrase before any note does.
func TestSyncInfoChecksPassphrase(t *testing.T) {
	raw := []byte(`{"_id":"syncinfo","type":"syncinfo","e_":true,"data":"` + mustEncryptV2(t, "qwertyuiopasdfghjklzxcvbnmqwer") + `"}`)
	if doc, err := vaultencDecoder().Decode(raw); err != nil || doc.Kind != KindSkip || !doc.E2EE {
		t.Errorf("right passphrase: %+v, %v", doc, err)
	}
	wrong := NewDecoder("Tr0ub4dor&3", vaultencDecoder().keys.salt)
	if _, err := wrong.Decode(raw); !errors.Is(err, ErrWrongPassphrase) {
		t.Errorf("wrong passphrase: %v", err)
	}
}

// A Decoder is shared by concurrent decoders; the first derivation races.
func TestDecoderConcurrent(t *testing.T) {
	d := NewDecoder(passphrase, vaultencDecoder().keys.salt)
	docs := mustAllDocs(t, "testdata/vaultenc.all_docs.json")
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(docs))
	for range 4 {
		for _, raw := range docs {
			wg.Go(func() {
				if _, err := d.Decode(raw); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
