package livesync

import (
	"encoding/json"
	"fmt"
	"strings"
)

// DetectE2EE reports whether any of the raw documents carries an end-to-end
// encryption marker (FORMAT.md §5). It deliberately ignores a "%" at the start
// of chunk data, which plain markdown (%%comments%%) produces too. Documents
// that do not parse are ignored.
func DetectE2EE(raws ...[]byte) bool {
	for _, raw := range raws {
		var r rawDoc
		if json.Unmarshal(raw, &r) == nil && r.e2ee() {
			return true
		}
	}
	return false
}

func (r *rawDoc) e2ee() bool {
	if r.Encrypted || strings.HasPrefix(r.ID, encryptedChunkID) || strings.HasPrefix(r.Path, encryptedMeta) {
		return true
	}
	if strings.HasPrefix(r.ID, "f:") && isV1Path(r.Path) {
		return true
	}
	for _, c := range r.Children {
		if strings.HasPrefix(c, encryptedChunkID) {
			return true
		}
	}
	for k := range r.Eden {
		if strings.HasPrefix(k, edenKeyV1) {
			return true
		}
	}
	return false
}

// isV1Path reports a path encrypted by a 0.18–0.24 writer.
func isV1Path(p string) bool {
	return (strings.HasPrefix(p, "%") && len(p) > 64) || strings.HasPrefix(p, `["`)
}

// decryptData returns a leaf's or the sync-info document's data, decrypted
// when e_ is set or the id is an encrypted chunk id (V1 chunks from before
// plugin 0.23.21 have no e_).
func (d *Decoder) decryptData(r *rawDoc) (string, error) {
	var data string
	if err := json.Unmarshal(r.Data, &data); err != nil {
		return "", fmt.Errorf("%w: data is not a string", ErrMalformed)
	}
	if !r.Encrypted && !strings.HasPrefix(r.ID, encryptedChunkID) {
		return data, nil
	}
	return d.decrypt(data)
}

func (d *Decoder) decrypt(s string) (string, error) {
	if d.keys == nil {
		return "", ErrEncrypted
	}
	return d.keys.decrypt(s)
}

// metadata is the plaintext of a V2-encrypted path.
type metadata struct {
	Path     *string   `json:"path"`
	Mtime    *float64  `json:"mtime"`
	Ctime    *float64  `json:"ctime"`
	Size     *float64  `json:"size"`
	Children *[]string `json:"children"`
}

// path returns a note document's path, decrypted when it is encrypted: V2
// metadata also carries the note's times, size and children, which replace
// n's.
func (d *Decoder) path(r *rawDoc, n *Note) (string, error) {
	switch {
	case strings.HasPrefix(r.Path, encryptedMeta):
		plain, err := d.decrypt(r.Path[len(encryptedMeta):])
		if err != nil {
			return "", fmt.Errorf("metadata: %w", err)
		}
		var m metadata
		if err := json.Unmarshal([]byte(plain), &m); err != nil {
			return "", fmt.Errorf("%w: metadata: %w", ErrMalformed, err)
		}
		n.Encrypted = true
		return m.apply(n), nil
	case n.Obfuscated && isV1Path(r.Path):
		plain, err := d.decrypt(r.Path)
		if err != nil {
			return "", fmt.Errorf("path: %w", err)
		}
		n.Encrypted = true
		return plain, nil
	}
	return r.Path, nil
}

// apply sets the fields m carries on n and returns m's path, "" when it has
// none.
func (m metadata) apply(n *Note) string {
	if m.Mtime != nil {
		n.Mtime = millis(*m.Mtime)
	}
	if m.Ctime != nil {
		n.Ctime = millis(*m.Ctime)
	}
	if m.Size != nil {
		n.Size = int64(*m.Size)
	}
	if m.Children != nil {
		n.Children = *m.Children
	}
	if m.Path == nil {
		return ""
	}
	return *m.Path
}

// eden returns the inline chunks, decrypting an encrypted eden, which
// replaces the plain entries as the plugin does.
func (d *Decoder) eden(raw map[string]edenEntry) (map[string]string, bool, error) {
	if len(raw) == 0 {
		return nil, false, nil
	}
	out := map[string]string{}
	decrypted := false
	for _, key := range []string{edenKeyV1, edenKeyV2} {
		e, ok := raw[key]
		if !ok {
			continue
		}
		plain, err := d.decrypt(e.Data)
		if err != nil {
			return nil, false, err
		}
		var inner map[string]edenEntry
		if err := json.Unmarshal([]byte(plain), &inner); err != nil {
			return nil, false, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		for id, e := range inner {
			out[id] = e.Data
		}
		decrypted = true
	}
	if !decrypted {
		for id, e := range raw {
			out[id] = e.Data
		}
	}
	if len(out) == 0 {
		return nil, decrypted, nil
	}
	return out, decrypted, nil
}
