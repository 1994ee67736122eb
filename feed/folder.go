package feed

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/vaultask/vaultask/index"
)

// ScanFolder reads every note of a vault folder that corpus selects. Paths
// are vault-relative with forward slashes; a note's revision is its
// modification time, so a touched file is a new revision of the same text.
func ScanFolder(dir string, corpus index.Corpus) ([]index.NoteInput, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("vault folder %s: not a readable directory", dir)
	}
	var notes []index.NoteInput
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !corpus.Match(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		text, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		notes = append(notes, index.NoteInput{
			Path:  rel,
			Rev:   strconv.FormatInt(info.ModTime().UnixNano(), 10),
			Text:  string(text),
			MTime: info.ModTime(),
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan vault folder %s: %w", dir, err)
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].Path < notes[j].Path })
	return notes, nil
}
