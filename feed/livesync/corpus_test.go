package livesync

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vaultask/vaultask/tstest/corpustext"
)

// helpCorpus decodes help.all_docs.json.gz once for the tests that use it.
var helpCorpus struct {
	once sync.Once
	v    vault
}

func mustHelp(t *testing.T) vault {
	t.Helper()
	dir := corpustext.Require(t)
	helpCorpus.once.Do(func() {
		helpCorpus.v = mustDecodeAll(t, &Decoder{}, mustAllDocs(t, filepath.Join(dir, "help.all_docs.json.gz")))
	})
	if helpCorpus.v.notes == nil {
		t.Fatal("help corpus failed to decode in an earlier test")
	}
	return helpCorpus.v
}

// The whole help vault: 265 markdown notes of which one is soft-deleted, the
// three edited notes at their later revision, every note (binaries too)
// complete and of the size its metadata states.
func TestCorpusHelp(t *testing.T) {
	v := mustHelp(t)
	live, deleted, binary, svg := 0, 0, 0, 0
	for path, doc := range v.notes {
		n := doc.Note
		if DocumentID(path, false, "") != doc.ID {
			t.Errorf("%s: id %s is not the lower-cased derivation", path, doc.ID)
		}
		if n.Deleted {
			deleted++
			continue
		}
		b, err := n.Read(v.chunks)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		switch {
		case n.Binary:
			binary++
		case strings.HasSuffix(path, ".svg"):
			svg++
		case strings.HasSuffix(path, ".md"):
			live++
			if len(b) == 0 {
				t.Errorf("%s is empty", path)
			}
		}
	}
	if live != 264 || deleted != 1 || binary != 48 || svg != 81 {
		t.Errorf("live md %d (want 264), soft-deleted %d (1), binary %d (48), svg %d (81)", live, deleted, binary, svg)
	}
	if n := v.notes["en/Plugins/Random note.md"]; n.Note == nil || !n.Note.Deleted || !strings.HasPrefix(n.Rev, "2-") || len(n.Note.Children) == 0 {
		t.Errorf("Random note = %+v, want soft-deleted at rev 2 with its children kept", n)
	}
	recreated := v.notes["sv/Filer och mappar/Konfigurationsmapp.md"]
	if recreated.Note == nil || recreated.Note.Deleted || !strings.HasPrefix(recreated.Rev, "3-") {
		t.Errorf("re-created note = %+v, want live at rev 3", recreated)
	}
	texts := v.texts(t)
	for _, path := range []string{"en/Home.md", "sv/Filer och mappar/Hantera anteckningar.md", "tr/Eklentiler/Dosya Gezgini.md"} {
		if doc := v.notes[path]; !strings.HasPrefix(doc.Rev, "2-") || texts[path] == "" {
			t.Errorf("edited note %s: rev %s, %d bytes", path, doc.Rev, len(texts[path]))
		}
	}
}

// help-enc is en/Obsidian Sync/ of help, E2EE V2 with obfuscated paths: it
// decrypts to the same texts.
func TestCorpusHelpEnc(t *testing.T) {
	dir := corpustext.Require(t)
	p, err := ParseSyncParameters(mustRead(t, filepath.Join(dir, "help-enc.local_sync_parameters.json")))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseMilestone(mustRead(t, filepath.Join(dir, "help-enc.local_milestone.json")))
	if err != nil || !m.Settings.Encrypt || !m.Settings.UsePathObfuscation {
		t.Fatalf("help-enc milestone does not announce E2EE: %+v, %v", m.Settings, err)
	}
	d := NewDecoder(passphrase, p.PBKDF2Salt)
	docs := mustAllDocs(t, filepath.Join(dir, "help-enc.all_docs.json"))
	if !DetectE2EE(docs...) {
		t.Fatal("help-enc not detected as E2EE")
	}
	enc := mustDecodeAll(t, d, docs)
	for path, doc := range enc.notes {
		if !doc.Note.Encrypted || DocumentID(path, m.Settings.HandleFilenameCaseSensitive, passphrase) != doc.ID {
			t.Errorf("%s: encrypted %v, id %s not derived from the path", path, doc.Note.Encrypted, doc.ID)
		}
	}
	want := map[string]string{}
	for path, text := range mustHelp(t).texts(t) {
		if strings.HasPrefix(path, "en/Obsidian Sync/") {
			want[path] = text
		}
	}
	got := enc.texts(t)
	if len(got) == 0 || len(want) == 0 {
		t.Fatalf("%d decrypted notes, %d expected", len(got), len(want))
	}
	equalTexts(t, got, want)

	f := newFollower(d)
	for _, raw := range mustChanges(t, filepath.Join(dir, "help-enc.changes.json")) {
		f.apply(t, raw)
	}
	if len(f.parked) != 0 || f.everParked != 5 {
		t.Errorf("changes replay: %d parked at the end, %d ever parked (want 0, 5)", len(f.parked), f.everParked)
	}
	equalTexts(t, f.texts, got)
}

// help-case keeps the case of paths in ids; path comes from the path field
// either way.
func TestCorpusHelpCase(t *testing.T) {
	dir := corpustext.Require(t)
	m, err := ParseMilestone(mustRead(t, filepath.Join(dir, "help-case.local_milestone.json")))
	if err != nil || !m.Settings.HandleFilenameCaseSensitive {
		t.Fatalf("help-case milestone: %+v, %v", m.Settings, err)
	}
	v := mustDecodeAll(t, &Decoder{}, mustAllDocs(t, filepath.Join(dir, "help-case.all_docs.json")))
	upper := 0
	for path, doc := range v.notes {
		if doc.ID != path || DocumentID(path, true, "") != doc.ID {
			t.Errorf("id %q for path %q, want the path itself", doc.ID, path)
		}
		if strings.ToLower(path) != path {
			upper++
		}
	}
	texts := v.texts(t)
	if len(texts) != 25 || upper == 0 {
		t.Errorf("%d notes, %d with capitals", len(texts), upper)
	}
	for path, text := range mustHelp(t).texts(t) {
		if strings.HasPrefix(path, "tr/") && path != "tr/Eklentiler/Dosya Gezgini.md" && texts[path] != text {
			t.Errorf("%s differs between help-case and help", path)
		}
	}
}

// The whole hub vault, replayed from its _changes feed as a follower would
// (1187 notes arrive before their chunks): every note reads, including the
// root note that the test server's _all_docs leaves out and the file whose
// name had a ':'. (_all_docs decoding is covered by help; doing both here
// would double the time under -race.)
func TestCorpusHub(t *testing.T) {
	dir := corpustext.Require(t)
	f := newFollower(&Decoder{})
	for _, raw := range mustChanges(t, filepath.Join(dir, "hub.changes.json.gz")) {
		f.apply(t, raw)
	}
	if len(f.parked) != 0 || f.everParked != 1187 {
		t.Errorf("%d notes parked at the end, %d ever parked (want 0, 1187)", len(f.parked), f.everParked)
	}
	if len(f.texts) != 6571 || len(f.binary) != 0 {
		t.Errorf("%d text notes, %d binary; want 6571, 0", len(f.texts), len(f.binary))
	}
	for id, path := range f.idPath {
		if DocumentID(path, false, "") != id {
			t.Errorf("%s: id %s is not the lower-cased derivation", path, id)
		}
	}
	if f.texts["🗂️ hub.md"] == "" {
		t.Error("root note missing")
	}
	// LiveSync took "RedShift:" for a prefix; the stored path is kept as it
	// is, leading space included, and indexed like any other.
	const quirk = " OLED Blue Light Filter.md"
	if f.idPath[" oled blue light filter.md"] != quirk || !strings.Contains(f.texts[quirk], "OLED") {
		t.Errorf("%q: text %.80q", quirk, f.texts[quirk])
	}
	for path := range f.texts {
		if strings.Contains(path, ":") {
			t.Errorf("unexpected path %q", path)
		}
	}
}
