package livesyncput

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/vaultask/vaultask/feed/livesync"
)

// Client writes to one database.
type Client struct {
	// DB is the database URL, e.g. http://127.0.0.1:5984/obsidian.
	DB             string
	User, Password string
	HTTP           *http.Client
}

// chunkSize is roughly where LiveSync's splitter cuts plain text: a few
// hundred bytes to a few KB, preferably at a line break.
const chunkSize = 1000

// Docs are the documents of one note as LiveSync writes them in a new,
// unencrypted vault (ids lower-cased): the chunks, then the metadata
// document (path, children, size, times).
func Docs(path, text string, mtime time.Time) (chunks []map[string]any, note map[string]any) {
	return docs(path, "plain", split(text), len(text), mtime)
}

// textExtensions are the files LiveSync stores as text ("plain"); it
// stores every other file as binary ("newnote").
var textExtensions = map[string]bool{".md": true, ".txt": true, ".svg": true, ".html": true, ".csv": true, ".css": true, ".js": true, ".xml": true, ".canvas": true}

// binaryPiece is the size of a binary file's pieces before base64.
const binaryPiece = 256 << 10

// FileDocs are the documents of any vault file: a text file as Docs
// writes it, any other as a binary note whose chunks hold base64 pieces.
func FileDocs(path string, data []byte, mtime time.Time) (chunks []map[string]any, note map[string]any) {
	if textExtensions[strings.ToLower(filepath.Ext(path))] {
		return Docs(path, string(data), mtime)
	}
	var pieces []string
	for rest := data; len(rest) > 0; {
		n := min(len(rest), binaryPiece)
		pieces = append(pieces, base64.StdEncoding.EncodeToString(rest[:n]))
		rest = rest[n:]
	}
	return docs(path, "newnote", pieces, len(data), mtime)
}

func docs(path, typ string, pieces []string, size int, mtime time.Time) (chunks []map[string]any, note map[string]any) {
	children := []string{}
	seen := map[string]bool{}
	for _, piece := range pieces {
		id := chunkID(piece)
		children = append(children, id)
		if !seen[id] {
			seen[id] = true
			chunks = append(chunks, map[string]any{"_id": id, "type": "leaf", "data": piece})
		}
	}
	ms := mtime.UnixMilli()
	note = map[string]any{"_id": noteID(path), "path": path, "type": typ, "children": children,
		"ctime": ms, "mtime": ms, "size": size, "eden": map[string]any{}}
	return chunks, note
}

// noteID is the id LiveSync gives path in a new vault: case-insensitive,
// not obfuscated.
func noteID(path string) string { return livesync.DocumentID(path, false, "") }

// split cuts text into pieces of about chunkSize bytes at line breaks.
func split(text string) []string {
	var out []string
	for len(text) > chunkSize {
		cut := strings.LastIndexByte(text[:chunkSize], '\n') + 1
		if cut <= 0 {
			cut = chunkSize
			for cut < len(text) && text[cut]&0xC0 == 0x80 {
				cut++ // not inside a UTF-8 sequence
			}
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}

// chunkID is a content address in LiveSync's shape: "h:" and 13 base-36
// digits of a hash of the data.
func chunkID(data string) string {
	sum := sha256.Sum256([]byte(data))
	n := new(big.Int).SetBytes(sum[:9])
	id := n.Text(36)
	for len(id) < 13 {
		id = "0" + id
	}
	return "h:" + id[:13]
}

// Put writes a note: its chunks first, then its metadata, as a new revision
// of the note's document when there is one. notesFirst writes the
// metadata before the chunks, in two requests, as LiveSync's replication
// sometimes delivers them.
func (c *Client) Put(ctx context.Context, path, text string, notesFirst bool) error {
	chunks, note := Docs(path, text, time.Now())
	return c.put(ctx, chunks, note, notesFirst)
}

// PutFile writes any vault file as FileDocs makes it, chunks first.
func (c *Client) PutFile(ctx context.Context, path string, data []byte, mtime time.Time) error {
	chunks, note := FileDocs(path, data, mtime)
	return c.put(ctx, chunks, note, false)
}

// PutMetadata writes only a note's metadata document, as a replication
// cut off before its chunks leaves it.
func (c *Client) PutMetadata(ctx context.Context, path, text string) error {
	_, note := Docs(path, text, time.Now())
	return c.put(ctx, nil, note, false)
}

func (c *Client) put(ctx context.Context, chunks []map[string]any, note map[string]any, notesFirst bool) error {
	var cur struct {
		Rev string `json:"_rev"`
	}
	switch err := c.do(ctx, http.MethodGet, "/"+url.PathEscape(note["_id"].(string)), nil, &cur); {
	case err == nil:
		note["_rev"] = cur.Rev
	case !isNotFound(err):
		return err
	}
	docs := make([]any, 0, len(chunks)+1)
	for _, ch := range chunks {
		docs = append(docs, ch)
	}
	if notesFirst && len(docs) > 0 {
		if err := c.bulk(ctx, []any{note}); err != nil {
			return err
		}
		return c.bulk(ctx, docs)
	}
	return c.bulk(ctx, append(docs, note))
}

// CreateVault makes the database as LiveSync sets up a new remote vault:
// the database, its version document, the milestone with this setup's
// creation time and settings, and the sync parameters with a fresh salt.
// A database already there is an error: it may be someone's vault.
func (c *Client) CreateVault(ctx context.Context) error {
	if err := c.do(ctx, http.MethodPut, "", nil, nil); err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return err
	}
	settings := map[string]any{"handleFilenameCaseSensitive": false, "encrypt": false, "usePathObfuscation": false,
		"enableCompression": false, "useEden": false, "hashAlg": "xxhash64", "chunkSplitterVersion": "v3-rabin-karp"}
	for _, doc := range []map[string]any{
		{"_id": "obsydian_livesync_version", "type": "versioninfo", "version": 12},
		{"_id": "_local/obsydian_livesync_milestone", "type": "milestoneinfo", "created": time.Now().UnixMilli(), "locked": false,
			"accepted_nodes": []string{"livesyncput"}, "tweak_values": map[string]any{"livesyncput": settings, "PREFERRED": settings}},
		{"_id": "_local/obsidian_livesync_sync_parameters", "type": "sync-parameters", "protocolVersion": 2,
			"pbkdf2salt": base64.StdEncoding.EncodeToString(salt)},
	} {
		if err := c.do(ctx, http.MethodPut, "/"+doc["_id"].(string), doc, nil); err != nil {
			return fmt.Errorf("write %s: %w", doc["_id"], err)
		}
	}
	return nil
}

// Note is a note to write: its vault path and its text.
type Note struct{ Path, Text string }

// PutNew writes notes that are not in the database yet in one _bulk_docs
// request, every chunk before the notes, as a device replicating a batch of
// new files does. A note already in the database is an error; a chunk
// already there is not (content-addressed, so it is the same chunk).
func (c *Client) PutNew(ctx context.Context, notes []Note) error {
	var chunks, metas []any
	seen := map[string]bool{}
	now := time.Now()
	for _, n := range notes {
		cs, note := Docs(n.Path, n.Text, now)
		for _, ch := range cs {
			if id := ch["_id"].(string); !seen[id] {
				seen[id] = true
				chunks = append(chunks, ch)
			}
		}
		metas = append(metas, note)
	}
	return c.bulk(ctx, append(chunks, metas...))
}

// Delete soft-deletes a note, as LiveSync does: a new revision with
// "deleted": true that keeps its children.
func (c *Client) Delete(ctx context.Context, path string) error {
	var doc map[string]any
	if err := c.do(ctx, http.MethodGet, "/"+url.PathEscape(noteID(path)), nil, &doc); err != nil {
		return err
	}
	doc["deleted"] = true
	doc["mtime"] = time.Now().UnixMilli()
	return c.bulk(ctx, []any{doc})
}

func (c *Client) bulk(ctx context.Context, docs []any) error {
	var res []struct {
		ID, Error, Reason string
	}
	if err := c.do(ctx, http.MethodPost, "/_bulk_docs", map[string]any{"docs": docs}, &res); err != nil {
		return err
	}
	for _, r := range res {
		// A conflict on a chunk: the same content is there. On a note it is a
		// lost race with another writer, and nothing was written.
		if r.Error != "" && (r.Error != "conflict" || !strings.HasPrefix(r.ID, "h:")) {
			return fmt.Errorf("write %s: %s: %s", r.ID, r.Error, r.Reason)
		}
	}
	return nil
}

type statusError struct {
	status int
	body   string
}

func (e *statusError) Error() string { return fmt.Sprintf("couchdb: %d %s", e.status, e.body) }

func isNotFound(err error) bool {
	se, ok := err.(*statusError)
	return ok && se.status == http.StatusNotFound
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.DB, "/")+path, rd)
	if err != nil {
		return err
	}
	if c.User != "" {
		req.SetBasicAuth(c.User, c.Password)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 400 {
		return &statusError{resp.StatusCode, strings.TrimSpace(string(b))}
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
