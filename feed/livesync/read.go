package livesync

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrMissingChunks is wrapped by *MissingChunksError.
	ErrMissingChunks = errors.New("missing chunks")
	// ErrSizeMismatch means the reassembled bytes differ from the note's
	// size: the note is incomplete or being written. Retry later; never
	// index the bytes.
	ErrSizeMismatch = errors.New("size mismatch: incomplete or mid-write")
	// ErrDeleted means Read was called on a soft-deleted note.
	ErrDeleted = errors.New("note is soft-deleted")
)

// ChunkSource gives the decoded data (Doc.Data of KindChunk documents) of
// chunks by id. Chunks returns the entries it has among ids, and may return
// more; an id it lacks is reported to the caller of Read as missing, so a
// source can be a plain cache, with the caller fetching the missing ids in
// one batched POST _all_docs {"keys": […]} and reading again.
type ChunkSource interface {
	Chunks(ids []string) (map[string]string, error)
}

// ChunkMap is an in-memory ChunkSource.
type ChunkMap map[string]string

// Chunks returns the whole map: Read looks up only what it needs.
func (m ChunkMap) Chunks([]string) (map[string]string, error) { return m, nil }

// MissingChunksError reports the chunk ids a ChunkSource did not have.
// Nothing is read when it is returned: a note is never partial.
type MissingChunksError struct {
	Path string
	// IDs are unique, in order of first use.
	IDs []string
}

func (e *MissingChunksError) Error() string {
	const shown = 5
	ids := e.IDs
	more := ""
	if len(ids) > shown {
		ids, more = ids[:shown], fmt.Sprintf(" and %d more", len(e.IDs)-shown)
	}
	return fmt.Sprintf("read %s: %d missing chunks: %s%s", e.Path, len(e.IDs), strings.Join(ids, ", "), more)
}

func (e *MissingChunksError) Unwrap() error { return ErrMissingChunks }

// Read reassembles the note's bytes (UTF-8 for text): eden entries first,
// then src for the other children, in order and with repetitions. It returns
// a *MissingChunksError when src lacks chunks and an error wrapping
// ErrSizeMismatch when a non-zero size disagrees with the result; it never
// returns bytes together with an error.
func (n *Note) Read(src ChunkSource) ([]byte, error) {
	if n.Deleted {
		return nil, fmt.Errorf("read %s: %w", n.Path, ErrDeleted)
	}
	pieces := n.Inline
	if !n.Legacy {
		var err error
		if pieces, err = n.pieces(src); err != nil {
			return nil, err
		}
	}
	var content []byte
	if n.Binary {
		var err error
		if content, err = decodeBinary(pieces); err != nil {
			return nil, fmt.Errorf("read %s: %w", n.Path, err)
		}
	} else {
		content = []byte(strings.Join(pieces, ""))
	}
	if n.Size != 0 && int64(len(content)) != n.Size {
		return nil, fmt.Errorf("read %s: size %d, reassembled %d bytes: %w", n.Path, n.Size, len(content), ErrSizeMismatch)
	}
	return content, nil
}

// pieces returns the data of every child, asking src once for the ids that
// eden does not hold.
func (n *Note) pieces(src ChunkSource) ([]string, error) {
	var need []string
	seen := map[string]bool{}
	for _, id := range n.Children {
		if _, ok := n.Eden[id]; !ok && !seen[id] {
			seen[id] = true
			need = append(need, id)
		}
	}
	var got map[string]string
	if len(need) > 0 && src != nil {
		var err error
		if got, err = src.Chunks(need); err != nil {
			return nil, fmt.Errorf("read %s: chunks: %w", n.Path, err)
		}
	}
	var missing []string
	for _, id := range need {
		if _, ok := got[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, &MissingChunksError{Path: n.Path, IDs: missing}
	}
	pieces := make([]string, len(n.Children))
	for i, id := range n.Children {
		if data, ok := n.Eden[id]; ok {
			pieces[i] = data
		} else {
			pieces[i] = got[id]
		}
	}
	return pieces, nil
}
