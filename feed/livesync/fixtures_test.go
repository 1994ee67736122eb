package livesync

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

const editedItem = "\n- one more item\n"

// The plain fixture decodes to its four files, with the soft-deleted one
// marked and the version document reported.
func TestVaultFixture(t *testing.T) {
	v := mustDecodeAll(t, &Decoder{}, mustAllDocs(t, "testdata/vault.all_docs.json"))
	if got := sortedKeys(v.notes); strings.Join(got, "|") != "Attachments/pixel.png|Empty.md|Notes/Shopping List.md|_private/Calculus.md" {
		t.Fatalf("paths = %q", got)
	}
	if reason := v.skips["obsydian_livesync_version"]; reason != "version document" {
		t.Errorf("version doc skipped as %q", reason)
	}

	calc := v.notes["_private/Calculus.md"]
	if calc.ID != "/_private/calculus.md" || calc.Note.Binary || calc.Note.Size != 24 || calc.Note.Mtime.UnixMilli() != 1796015331444 {
		t.Errorf("calculus = %+v %+v", calc, calc.Note)
	}
	empty := v.notes["Empty.md"].Note
	if !empty.Deleted || len(empty.Children) != 0 {
		t.Errorf("Empty.md = %+v, want soft-deleted with no children", empty)
	}
	if _, err := empty.Read(v.chunks); !errors.Is(err, ErrDeleted) {
		t.Errorf("reading a soft-deleted note: %v, want ErrDeleted", err)
	}

	shop := v.notes["Notes/Shopping List.md"]
	if !strings.HasPrefix(shop.Rev, "2-") {
		t.Errorf("shopping list rev %s, want 2-", shop.Rev)
	}
	texts := v.texts(t)
	if texts["_private/Calculus.md"] != "Limits and derivatives.\n" {
		t.Errorf("calculus text %q", texts["_private/Calculus.md"])
	}
	if s := texts["Notes/Shopping List.md"]; len(s) != 1081 || !strings.HasSuffix(s, editedItem) || !strings.Contains(s, "%%hidden comment%%") {
		t.Errorf("shopping list: %d bytes, ends %q", len(s), s[max(len(s)-40, 0):])
	}

	pixel := v.notes["Attachments/pixel.png"].Note
	if !pixel.Binary {
		t.Fatal("pixel.png is not binary")
	}
	png, err := pixel.Read(v.chunks)
	if err != nil || len(png) != 66 || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("pixel.png = %q, %v", png, err)
	}
	if DetectE2EE(mustAllDocs(t, "testdata/vault.all_docs.json")...) {
		t.Error("plain vault detected as E2EE (its markdown-comment chunk must not count)")
	}
}

// vault and vaultenc hold the same files written through LiveSync, one plain
// and one E2EE V2 with obfuscated paths. Their only common live note, the
// shopping list, was edited in vault after vaultenc was written (rev 2 adds
// one item), so the comparison is: vaultenc's text is vault's rev-1 text,
// which vault still holds as chunks (chunks are never deleted), and vault's
// live text is that plus the edit.
func TestVaultencMatchesVault(t *testing.T) {
	plain := mustDecodeAll(t, &Decoder{}, mustAllDocs(t, "testdata/vault.all_docs.json"))
	enc := mustDecodeAll(t, vaultencDecoder(), mustAllDocs(t, "testdata/vaultenc.all_docs.json"))

	encTexts, plainTexts := enc.texts(t), plain.texts(t)
	if got := sortedKeys(encTexts); len(got) != 1 || got[0] != "Notes/Shopping List.md" {
		t.Fatalf("vaultenc live texts = %q", got)
	}
	for path, text := range encTexts {
		live, ok := plainTexts[path]
		if !ok {
			t.Fatalf("%s not live in vault", path)
		}
		if live != text+editedItem {
			t.Errorf("%s: vault rev 2 is not vaultenc's text plus the edit", path)
		}
		rev1 := Note{Path: path, Type: "plain", Children: []string{"h:paidb9s88ckw", "h:3hqtm35dufspp"}, Size: 1064}
		b, err := rev1.Read(plain.chunks)
		if err != nil || string(b) != text {
			t.Errorf("%s: vault's rev-1 chunks differ from vaultenc: %v", path, err)
		}
	}

	shop := enc.notes["Notes/Shopping List.md"]
	if !shop.E2EE || !shop.Note.Encrypted || !shop.Note.Obfuscated || shop.Note.Size != 1064 ||
		shop.Note.Mtime.UnixMilli() != 1796015331444 || len(shop.Note.Children) != 2 {
		t.Errorf("decrypted metadata = %+v", shop.Note)
	}
	// The soft-deleted note's metadata still decrypts, and its kept chunks
	// are the same text as the plain vault's.
	calc := enc.notes["_private/Calculus.md"]
	if !calc.Note.Deleted || calc.Note.Size != 24 {
		t.Fatalf("calculus = %+v", calc.Note)
	}
	undeleted := *calc.Note
	undeleted.Deleted = false
	b, err := undeleted.Read(enc.chunks)
	if err != nil || string(b) != plainTexts["_private/Calculus.md"] {
		t.Errorf("calculus chunks = %q, %v", b, err)
	}
}

// Replaying _changes (notes before their chunks) ends where _all_docs does.
func TestFixtureChangesReplay(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    *Decoder
	}{{"vault", &Decoder{}}, {"vaultenc", vaultencDecoder()}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFollower(tc.d)
			for _, raw := range mustChanges(t, "testdata/"+tc.name+".changes.json") {
				f.apply(t, raw)
			}
			if len(f.parked) != 0 {
				t.Errorf("notes still parked: %v", sortedKeys(f.parked))
			}
			if f.everParked == 0 {
				t.Error("no note arrived before its chunks; the replay tests nothing")
			}
			equalTexts(t, f.texts, mustDecodeAll(t, tc.d, mustAllDocs(t, "testdata/"+tc.name+".all_docs.json")).texts(t))
		})
	}
}

// Without a passphrase, every encrypted document says so; with a wrong one,
// decryption fails clearly instead of giving garbage.
func TestVaultencPassphrase(t *testing.T) {
	docs := mustAllDocs(t, "testdata/vaultenc.all_docs.json")
	if !DetectE2EE(docs...) {
		t.Fatal("vaultenc not detected as E2EE")
	}
	encrypted := 0
	for _, raw := range docs {
		doc, err := (&Decoder{}).Decode(raw)
		if doc.ID == "obsydian_livesync_version" {
			if err != nil || doc.Version != FormatVersion || doc.E2EE {
				t.Errorf("version doc = %+v, %v", doc, err)
			}
			continue
		}
		if !errors.Is(err, ErrEncrypted) || !doc.E2EE || doc.ID == "" {
			t.Errorf("%s without passphrase: %+v, %v", doc.ID, doc, err)
		}
		encrypted++
	}
	if encrypted != 5 {
		t.Errorf("%d encrypted docs, want 5", encrypted)
	}

	p, err := ParseSyncParameters(mustRead(t, "testdata/vaultenc.local_sync_parameters.json"))
	if err != nil {
		t.Fatal(err)
	}
	wrong := NewDecoder("incorrect horse battery staple", p.PBKDF2Salt)
	for _, raw := range docs {
		doc, err := wrong.Decode(raw)
		if doc.E2EE && (!errors.Is(err, ErrWrongPassphrase) || !strings.Contains(err.Error(), "cannot decrypt: wrong passphrase?")) {
			t.Errorf("%s with a wrong passphrase: %v", doc.ID, err)
		}
	}
	noSalt := NewDecoder(passphrase, nil)
	if _, err := noSalt.Decode(docs[0]); !errors.Is(err, ErrNoSalt) {
		t.Errorf("without salt: %v, want ErrNoSalt", err)
	}
}

func TestLocalDocs(t *testing.T) {
	p, err := ParseSyncParameters(mustRead(t, "testdata/vault.local_sync_parameters.json"))
	if err != nil || p.ProtocolVersion != 2 || len(p.PBKDF2Salt) != 32 {
		t.Errorf("sync parameters = %+v, %v", p, err)
	}
	for _, bad := range []string{`{"pbkdf2salt":"***"}`, `{"type":"sync-parameters"}`, `[`} {
		if _, err := ParseSyncParameters([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseSyncParameters(%s) = %v, want ErrMalformed", bad, err)
		}
	}

	plain, err := ParseMilestone(mustRead(t, "testdata/vault.local_milestone.json"))
	if err != nil || plain.Settings.Encrypt || plain.Settings.UsePathObfuscation || plain.Locked || plain.Created.IsZero() {
		t.Errorf("vault milestone = %+v, %v", plain, err)
	}
	enc, err := ParseMilestone(mustRead(t, "testdata/vaultenc.local_milestone.json"))
	s := enc.Settings
	if err != nil || !s.Encrypt || !s.UsePathObfuscation || s.HandleFilenameCaseSensitive || s.E2EEAlgorithm != "v2" || s.HashAlg != "xxhash64" {
		t.Errorf("vaultenc milestone = %+v, %v", enc, err)
	}
	nodeOnly, err := ParseMilestone([]byte(`{"locked":true,"accepted_nodes":["a","b"],"tweak_values":{"b":{"encrypt":true}}}`))
	if err != nil || !nodeOnly.Locked || !nodeOnly.Settings.Encrypt {
		t.Errorf("milestone without PREFERRED = %+v, %v", nodeOnly, err)
	}
	if _, err := ParseMilestone([]byte(`{"locked":"no"}`)); !errors.Is(err, ErrMalformed) {
		t.Errorf("bad milestone: %v", err)
	}
}

func TestFixturesAreCopies(t *testing.T) {
	entries, err := os.ReadDir("../../../shared/livesync/fixtures")
	if err != nil {
		t.Skipf("shared fixtures not available: %v", err)
	}
	for _, e := range entries {
		want, err := os.ReadFile("../../../shared/livesync/fixtures/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, "testdata/"+e.Name()); !bytes.Equal(got, want) {
			t.Errorf("testdata/%s differs from the shared fixture", e.Name())
		}
	}
}
